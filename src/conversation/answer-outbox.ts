import { faultPoint } from '../runtime/fault-points.js';
import type { ThreadState } from '../store/thread-state.js';
import { mentionable } from './participants.js';
import type { AnswerStream } from './thread-messenger.js';
import type { TurnScope } from './turn-scope.js';
import { takeBackUnrecorded } from './unrecorded-post.js';

/**
 * Shows the saved answer (`thread.outbox`): through the live stream when there is one, else
 * rewriting what a dead process left. The outbox is cleared only once the answer is shown.
 * `recorded`: the stream's messages the thread already has on record.
 */
export async function postOutbox(scope: TurnScope, thread: ThreadState, answer?: AnswerStream, recorded: ReadonlySet<string> = new Set()): Promise<void> {
  const markdown = thread.outbox;
  if (markdown === undefined) return;
  faultPoint('before-answer');
  const onRecord = new Set([...recorded, ...(thread.answerTs ?? [])]);
  let posted: readonly string[] = [];
  try {
    if (answer) await answer.finish(markdown);
    else posted = await scope.messenger.postAnswer({ channel: thread.channel, threadTs: thread.threadTs, markdown, mentionableUserIds: mentionable(thread), ...(thread.answerTs ? { replacing: thread.answerTs } : {}) });
  } catch (error) {
    forgetRefused(scope, thread);
    throw error;
  }
  delete thread.outbox;
  delete thread.answerTs;
  // The turn is over: a resume claimed inside this item has nothing left to finish.
  delete thread.inlineResume;
  // A stream message the thread has no record of must be saved (or, fenced, removed) now: nobody
  // else would know to rewrite it, so it would stand beside the successor's answer.
  if (answer?.messageTs().some((ts) => !onRecord.has(ts))) return scope.save(thread);
  // Otherwise this is the item's last write and rides with the queue's finish. Should the process
  // die first, the outbox is shown again: over the same messages when they were recorded (a
  // posted answer was never recorded before either, so that window is as it was). Should it
  // learn instead that another process took the thread (which shows the outbox again), the
  // messages of a whole post it has no record of are removed, so the answer stands once.
  const takeBack = takeBackUnrecorded(scope, { channel: thread.channel, threadKey: thread.threadKey, posted, recorded: onRecord });
  scope.saveAtEnd(thread, takeBack ? { takeBack } : {});
}

/**
 * Slack refused the answer (or may have taken it: it is not sent again). The item fails and the
 * thread is told so (see `createConversation`); the answer goes with that report, in the item's
 * finish. Kept, it would outlive the item that wrote it, and the next recovery of interrupted
 * work (a resume, a message, a retry) would take it for what that work left and post it instead
 * of finishing the work. A fenced item never writes this (its finish is refused): the thread's
 * new holder shows the answer again.
 */
function forgetRefused(scope: TurnScope, thread: ThreadState): void {
  delete thread.outbox;
  delete thread.answerTs;
  scope.saveAtEnd(thread);
}
