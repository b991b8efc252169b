/** Replies of Redis commands the store reads back: a pipeline's, and sorted sets read WITHSCORES. */

/** A pipeline's replies, or its first error. */
export function repliesOf(results: Array<[Error | null, unknown]> | null): unknown[] {
  return (results ?? []).map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

/** [member, score, member, score…] → [member, score] pairs. */
export function pairs(flat: readonly string[]): Array<[string, number]> {
  const result: Array<[string, number]> = [];
  for (let index = 0; index + 1 < flat.length; index += 2) result.push([flat[index] as string, Number(flat[index + 1])]);
  return result;
}

/** [member, score, member, score…] lists, each sorted by score → the `limit` lowest members overall. */
export function mergeByScore(perShard: readonly string[][], limit: number): string[] {
  const entries: Array<[string, number]> = [];
  for (const flat of perShard) for (let index = 0; index + 1 < flat.length; index += 2) entries.push([flat[index] as string, Number(flat[index + 1])]);
  return entries.sort((left, right) => left[1] - right[1]).slice(0, limit).map(([member]) => member);
}
