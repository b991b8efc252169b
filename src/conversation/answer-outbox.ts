import { faultPoint } from '../runtime/fault-points.js';
import type { ThreadState } from '../store/thread-state.js';
import { mentionable } from './participants.js';
import type { AnswerStream } from './thread-messenger.js';
import type { TurnScope } from './turn-scope.js';

/**
 * Shows the saved answer (`thread.outbox`): through the live stream when there is one, else
 * rewriting what a dead process left. The outbox is cleared only once the answer is shown.
 */
export async function postOutbox(scope: TurnScope, thread: ThreadState, answer?: AnswerStream): Promise<void> {
  const markdown = thread.outbox;
  if (markdown === undefined) return;
  faultPoint('before-answer');
  if (answer) await answer.finish(markdown);
  else await scope.messenger.postAnswer({ channel: thread.channel, threadTs: thread.threadTs, markdown, mentionableUserIds: mentionable(thread), ...(thread.answerTs ? { replacing: thread.answerTs } : {}) });
  delete thread.outbox;
  delete thread.answerTs;
  await scope.save(thread);
}
