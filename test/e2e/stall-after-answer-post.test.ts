import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * A quick answer (complete before the stream would open) is posted whole by `postOutbox`, and its
 * clearing of the outbox rides with the queue's finish of the item (`saveAtEnd`). A process that
 * stalls after Slack took the post but before that finish lands (a GC pause, a slow Redis) loses
 * its lock; the process that takes the item over finds the outbox still saved and posts the answer
 * again. The woken process is fenced at the finish, and nothing removes the message it posted and
 * never recorded (a streamed answer's unrecorded messages are removed in that case: run-and-publish),
 * so the thread shows the answer twice.
 *
 * The stall is modelled with the doomed bot's store: its finish of the item, and every lock
 * renewal sent meanwhile, go to Redis only once released; the replica (same Redis) takes over.
 */
const harness = useHarnesses();

describe('a process that stalls right after posting a quick answer, before its finish is written', () => {
  it('the thread shows the answer once', async () => {
    const control = { armed: false, stalling: false, reached: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
        ...store,
        async finishWork(fence, finished, ttl, closing, named) {
          if (control.armed && closing !== undefined && closing.thread.outbox === undefined && !control.stalling) {
            control.stalling = true;
            control.reached.resolve();
            await control.released.promise;
          }
          return store.finishWork(fence, finished, ttl, closing, named);
        },
        async extendLock(fence, ttlMs) {
          if (control.stalling) {
            await control.released.promise;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return store.extendLock(fence, ttlMs);
        },
      };
    };
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore });
    await h.startReplica();

    const answer = 'All pods are healthy.';
    h.openai.enqueue({ text: answer });
    control.armed = true;
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
    await control.reached.promise;
    // The stalled process had posted its answer.
    const stalledCopies = threadReplies(h, threadTs).filter((message) => message.text === answer);
    expect(stalledCopies).toHaveLength(1);
    // The replica takes the item over once the lock lapses and shows the saved answer.
    await waitFor(() => threadReplies(h, threadTs).filter((message) => message.text === answer).length >= 2 || h.slack.callsTo('chat.update').some((call) => call.args.text === answer), {
      timeoutMs: 15_000,
      message: 'the process that took over to show the answer',
    });
    control.released.resolve();
    await h.settled();
    const standing = threadReplies(h, threadTs).filter((message) => message.text === answer);
    expect(standing).toHaveLength(1);
    // The copy that stands is the one the process that took over showed: the stalled process removed its own, never both.
    expect(standing[0]!.ts).not.toBe(stalledCopies[0]!.ts);
  }, 60_000);
});
