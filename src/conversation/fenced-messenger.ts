import type { Lease } from './lease.js';
import type { AnswerStream, ThreadMessenger } from './thread-messenger.js';

/**
 * The messenger a turn uses: before each Slack write it makes sure this process still holds the
 * thread, so a process that stalled past its lock stops before posting a second answer or card (a
 * Slack post cannot be made conditional on a Redis token any other way). While the lock it last
 * renewed cannot have lapsed, nobody else can hold the thread and no round trip is needed; past
 * that (a stall, a slow renewal) Redis is asked (`Lease.assertHeld`).
 */
export function fencedMessenger(messenger: ThreadMessenger, lease: Lease): ThreadMessenger {
  const guarded =
    <ARGS extends unknown[], RESULT>(write: (...args: ARGS) => Promise<RESULT>) =>
    async (...args: ARGS): Promise<RESULT> => {
      await lease.assertHeld();
      return write(...args);
    };
  return {
    postAnswer: guarded((options) => messenger.postAnswer(options)),
    startAnswer(options): AnswerStream {
      const stream = messenger.startAnswer({ ...options, guard: () => lease.assertHeld() });
      return {
        append: (delta) => (lease.lost() ? undefined : stream.append(delta)),
        // Each write of the stream asks the lease itself (the guard above), after any write in flight.
        finish: (markdown) => stream.finish(markdown),
        messageTs: () => stream.messageTs(),
      };
    },
    answerShowsNothing: (options) => messenger.answerShowsNothing(options),
    withOpenCodeClosed: (options) => messenger.withOpenCodeClosed(options),
    postNotice: guarded((options) => messenger.postNotice(options)),
    postMention: guarded((options) => messenger.postMention(options)),
    postStepCard: guarded((options) => messenger.postStepCard(options)),
    updateStepCard: guarded((options) => messenger.updateStepCard(options)),
    postStepCopy: guarded((options) => messenger.postStepCopy(options)),
    updateStepCopy: guarded((options) => messenger.updateStepCopy(options)),
    permalinkOf: (options) => messenger.permalinkOf(options),
    postEphemeral: guarded((options) => messenger.postEphemeral(options)),
    setStatus: guarded((options) => messenger.setStatus(options)),
    readThread: (options) => messenger.readThread(options),
    findPostedCard: (options) => messenger.findPostedCard(options),
    // Not guarded: a fenced process removing what it posted but never recorded is the clean-up.
    deleteMessages: (options) => messenger.deleteMessages(options),
  };
}
