import type { TurnScope } from './turn-scope.js';

/**
 * The take-back of text posted whole (no stream: a quick reply): removes the messages it occupies
 * that the thread has no record of. For when the save that was to follow the post is refused as
 * fenced: the thread's new holder knows nothing of those messages and shows the text again (the
 * saved outbox, or the turn run again), so they would stand beside its copy. Messages on record it
 * rewrites instead. Undefined when every message is on record. `stepId`: the messages are that
 * step's cards, on record in the step rather than the thread (tried again, they are checked there).
 */
export function takeBackUnrecorded(scope: TurnScope, options: { channel: string; threadKey: string; stepId?: string; posted: readonly string[]; recorded: Iterable<string> }): (() => Promise<void>) | undefined {
  const recorded = new Set(options.recorded);
  const unrecorded = options.posted.filter((ts) => !recorded.has(ts));
  if (unrecorded.length === 0) return undefined;
  const { channel, threadKey, stepId } = options;
  return () => scope.takeBack({ channel, ts: unrecorded, threadKey, ...(stepId === undefined ? {} : { stepId }) });
}
