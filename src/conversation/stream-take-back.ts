import type { Logger } from 'pino';
import type { ThreadStore } from '../store/state-store.js';
import type { ThreadState } from '../store/thread-state.js';
import type { ShownAnswer } from './live-answer.js';
import type { TurnScope } from './turn-scope.js';
import { takeBackUnrecorded } from './unrecorded-post.js';

/**
 * The take-back of a stream, once this process learns another took the thread: removes its
 * messages the stored thread has no record of, since the new holder did not know them and showed
 * the answer again, so they would stand beside its copy. A message the stored thread records (or
 * recorded: the new holder may have cleared it since) is the new holder's to rewrite, and removing
 * it could remove its answer: so a message is removed only when every save that carried it is known
 * unwritten (refused as fenced, named: `NamedWrite`) and the stored thread does not record it now.
 */
export async function takeBackStream(options: { scope: TurnScope; store: Pick<ThreadStore, 'getThread'>; thread: ThreadState; shown: ShownAnswer; logger: Logger }): Promise<void> {
  const { scope, thread, shown, logger } = options;
  const stream = shown.stream;
  if (!stream) return;
  // Lets a post still in flight land (the stream's own writes are refused from here on), so its
  // message is known and can be removed too; then the saves of its messages settle (a resend after
  // a lost reply, answered as written, puts them on record).
  await stream.finish('').catch(() => {});
  await Promise.all([...shown.recording]);
  const unsaved = stream.messageTs().filter((ts) => !shown.recorded.has(ts) && !shown.maybeRecorded.has(ts));
  if (unsaved.length === 0) return;
  let stored: ThreadState | undefined;
  try {
    stored = await options.store.getThread(thread.threadKey);
  } catch (error) {
    // Not knowing what the thread records, nothing is removed: an answer twice rather than none.
    logger.warn({ event: 'answer-take-back-skipped', threadKey: thread.threadKey, err: error }, 'could not read the thread; the answer messages stay');
    return;
  }
  await takeBackUnrecorded(scope, { channel: thread.channel, threadKey: thread.threadKey, posted: unsaved, recorded: stored?.answerTs ?? [] })?.();
}
