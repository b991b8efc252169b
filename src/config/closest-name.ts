/**
 * The candidate closest to `name` (case aside) within `maxDistance` edits, for "did you mean"
 * hints: a misspelled setting, tool or server name. Undefined when none is that close.
 */
export function closestName(name: string, candidates: Iterable<string>, maxDistance = 2): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= maxDistance && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let i = 1; i <= left.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= right.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (left[i - 1] === right[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}
