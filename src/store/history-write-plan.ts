import { hash } from 'node:crypto';

/** What this process knows to be stored for a thread's history: the revision it read or wrote, and a digest per message. */
export interface KnownHistory {
  revision: number;
  digests: string[];
}

/**
 * How to bring the stored history to the current one. `patch`: drop the oldest `dropFront`
 * messages, replace the few that changed in place (`set`, indexes after the drop), append the new
 * ones; it is refused (and replaced by a `rewrite`) unless the stored history is still exactly the
 * known one (`baseRevision`, `baseLength`). The bytes of a patch follow the new messages, not the
 * history.
 */
export type HistoryWrite =
  | { mode: 'rewrite'; append: string[] }
  | { mode: 'patch'; baseRevision: number; baseLength: number; dropFront: number; set: Array<[index: number, message: string]>; append: string[] };

/** More messages changed in place than this, and the two histories are taken not to line up. */
const MAX_IN_PLACE_CHANGES = 4;

/** One-shot `hash` rather than `createHash`: a save digests every message, and the Hash object cost more than the hashing (1.4 against 0.5 µs for a 0.5 KB message). */
export function digestOf(serialized: string): string {
  return hash('sha1', serialized, 'base64');
}

/** The cheapest write from `known` to `serialized` (each message as JSON), or a rewrite when the two do not line up. */
export function planHistoryWrite(known: KnownHistory | undefined, serialized: readonly string[], digests: readonly string[] = serialized.map(digestOf)): HistoryWrite {
  const rewrite: HistoryWrite = { mode: 'rewrite', append: [...serialized] };
  if (!known) return rewrite;
  const stored = known.digests;
  if (digests.length === 0) return { mode: 'patch', baseRevision: known.revision, baseLength: stored.length, dropFront: stored.length, set: [], append: [] };
  // Trimming drops the oldest messages only, so the current first message is a stored one. The
  // same message can be stored more than once (a question asked again, the same answer): the
  // first place from which the rest lines up wins.
  for (let dropFront = stored.indexOf(digests[0] as string); dropFront !== -1; dropFront = stored.indexOf(digests[0] as string, dropFront + 1)) {
    const kept = stored.length - dropFront;
    // Messages removed from the end are not a shape a turn produces.
    if (kept > digests.length) continue;
    const set: Array<[number, string]> = [];
    for (let index = 0; index < kept && set.length <= MAX_IN_PLACE_CHANGES; index += 1) {
      if (stored[dropFront + index] !== digests[index]) set.push([index, serialized[index] as string]);
    }
    if (set.length <= MAX_IN_PLACE_CHANGES) return { mode: 'patch', baseRevision: known.revision, baseLength: stored.length, dropFront, set, append: serialized.slice(kept) };
  }
  return rewrite;
}

/** The last-known history of recently used threads, so a save writes only what changed. Bounded: the oldest thread is forgotten first. */
export function createKnownHistories(maxThreads = 2_000) {
  const known = new Map<string, KnownHistory>();
  return {
    get: (threadKey: string) => known.get(threadKey),
    set(threadKey: string, history: KnownHistory) {
      known.delete(threadKey);
      known.set(threadKey, history);
      if (known.size > maxThreads) known.delete(known.keys().next().value as string);
    },
    forget: (threadKey: string) => known.delete(threadKey),
  };
}
