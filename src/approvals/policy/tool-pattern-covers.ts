/**
 * Whether every tool name `narrower` matches is matched by `wider` too, for the globs of
 * `tool-pattern.ts` (`*` within one `.`-separated part, `**` across parts, `?` one character other
 * than a dot): `ops.**` covers `ops.*`, `ops.*` does not cover `ops.**`, `**` covers `*`.
 *
 * It looks for a name the narrower pattern matches and the wider one does not, walking both at once
 * (the narrower as it is, the wider as the set of places it may have reached). Characters neither
 * pattern names literally all behave alike (a wildcard takes any of them but a dot), so one stands
 * for all. False when no answer comes within `MAX_WORK` (only contrived patterns get there, such as
 * `**a` then many `?`, or hundreds of wildcards): a caller refusing rules refuses nothing unproven.
 */
export function toolPatternCovers(wider: string, narrower: string): boolean {
  if (wider === narrower) return true;
  const widerTokens = tokens(wider);
  const narrowerTokens = tokens(narrower);
  const alphabet = alphabetOf([...widerTokens, ...narrowerTokens]);
  const seen = new Set<string>();
  const queue: { at: number; wider: number[] }[] = [];
  const visit = (at: number, wider: number[]) => {
    const key = `${at}:${wider.join(',')}`;
    if (seen.has(key)) return;
    seen.add(key);
    queue.push({ at, wider });
  };
  const widerStart = closure(widerTokens, [0]);
  for (const at of closure(narrowerTokens, [0])) visit(at, widerStart);
  let work = 0;
  for (let next = 0; next < queue.length; next += 1) {
    const state = queue[next];
    if (state === undefined) break;
    work += alphabet.length * (state.wider.length + 1);
    if (work > MAX_WORK) return false;
    // The narrower pattern matched the name so far whole, and the wider one did not.
    if (state.at === narrowerTokens.length && !state.wider.includes(widerTokens.length)) return false;
    for (const character of alphabet) {
      const reached = step(narrowerTokens, [state.at], character);
      if (reached.length === 0) continue;
      const widerReached = step(widerTokens, state.wider, character);
      // Whatever is left of a pattern matches some rest of a name, which the wider one cannot.
      if (widerReached.length === 0) return false;
      for (const at of reached) visit(at, widerReached);
    }
  }
  return true;
}

/**
 * False when no tool name can match both patterns, told cheaply, so a caller comparing many pairs
 * (the loader's check for shadowed rules, every rule against every earlier one) can skip
 * `toolPatternCovers` for them: it would answer false. Every name a pattern matches starts with its
 * text up to the first wildcard, so two patterns whose such texts differ before the shorter ends
 * (`svc_001_*`, `svc_002_*`) share no name.
 */
export function toolPatternsMayOverlap(first: string, second: string): boolean {
  const [firstStart, secondStart] = [literalStart(first), literalStart(second)];
  return firstStart.startsWith(secondStart) || secondStart.startsWith(firstStart);
}

function literalStart(pattern: string): string {
  return pattern.split(/[*?]/, 1)[0] ?? '';
}

/** About the characters compared, so that start-up never waits on a contrived pattern (tens of milliseconds at most). */
const MAX_WORK = 100_000;

type Token = { kind: 'literal'; character: string } | { kind: 'one' } | { kind: 'part' } | { kind: 'any' };

/** As `compileToolPattern` reads a pattern: `**` first, then `*`, `?`, and literal characters. */
function tokens(pattern: string): Token[] {
  const result: Token[] = [];
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern[index] ?? '';
    if (character === '*' && pattern[index + 1] === '*') {
      result.push({ kind: 'any' });
      index += 1;
    } else if (character === '*') result.push({ kind: 'part' });
    else if (character === '?') result.push({ kind: 'one' });
    else result.push({ kind: 'literal', character });
  }
  return result;
}

/** The literal characters, the dot, and one character standing for every other. */
function alphabetOf(all: readonly Token[]): string[] {
  const characters = new Set(['.']);
  for (const token of all) if (token.kind === 'literal') characters.add(token.character);
  let other = 0;
  while (characters.has(String.fromCharCode(other))) other += 1;
  return [...characters, String.fromCharCode(other)];
}

/** The places reached by `character` from `from`, with the wildcards that may match nothing skipped. */
function step(pattern: readonly Token[], from: readonly number[], character: string): number[] {
  const reached: number[] = [];
  for (const at of from) {
    const token = pattern[at];
    if (token === undefined) continue;
    if (token.kind === 'literal' ? token.character === character : token.kind === 'any' || character !== '.') {
      reached.push(token.kind === 'part' || token.kind === 'any' ? at : at + 1);
    }
  }
  return closure(pattern, reached);
}

function closure(pattern: readonly Token[], from: readonly number[]): number[] {
  const reached = new Set<number>();
  for (let at of from) {
    reached.add(at);
    while (pattern[at]?.kind === 'part' || pattern[at]?.kind === 'any') {
      at += 1;
      reached.add(at);
    }
  }
  return [...reached].sort((left, right) => left - right);
}
