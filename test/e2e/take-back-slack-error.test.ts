import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';
import { FAST_KEPT_RETRIES } from '../helpers/fast-kept-retries.js';

/**
 * A quick answer (complete before the stream would open) is posted whole by `postOutbox`, and its
 * clearing of the outbox rides with the queue's finish of the item (`saveAtEnd`). A process that
 * stalls after Slack took the post but before that finish lands (a GC pause, a slow Redis) loses
 * its lock; the process that takes the item over finds the outbox still saved and posts the answer
 * again. The woken process is fenced at the finish and takes back the message it posted and never
 * recorded, so the thread shows the answer once.
 *
 * The take-back is one chat.delete per message with the client's two retries: when Slack fails it
 * (a blip, rate limits) the message must be tried again later, not dropped, or the thread shows the
 * answer twice. A take-back Slack refused is kept in Redis, tried again by the fenced process for
 * a few seconds and then by any process's sweep (here on `FAST_KEPT_RETRIES`, the same tries in less time).
 *
 * The stall is modelled with the doomed bot's store: its finish of the item, and every lock
 * renewal sent meanwhile, go to Redis only once released; the replica (same Redis) takes over.
 */
const harness = useHarnesses();

/** The stall and take-over above, with chat.delete failing `failures` times (503) once the stalled process wakes. */
async function answerTakenBackWhileSlackFails(failures: number) {
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
  const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore, keptRetries: FAST_KEPT_RETRIES });
  await h.startReplica();

  const answer = 'All pods are healthy.';
  h.openai.enqueue({ text: answer });
  control.armed = true;
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
  await control.reached.promise;
  // The stalled process had posted its answer.
  const copies = () => threadReplies(h, threadTs).filter((message) => message.text === answer);
  const stalledCopies = copies();
  expect(stalledCopies).toHaveLength(1);
  // The replica takes the item over once the lock lapses and shows the saved answer.
  await waitFor(() => copies().length >= 2 || h.slack.callsTo('chat.update').some((call) => call.args.text === answer), {
    timeoutMs: 15_000,
    message: 'the process that took over to show the answer',
  });
  h.slack.failNext('chat.delete', { status: 503 }, failures);
  control.released.resolve();
  await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-fenced"')), { timeoutMs: 15_000, message: 'the stalled process to find itself fenced' });
  return { h, copies, stalledTs: stalledCopies[0]!.ts };
}

describe('a quick answer taken back while Slack answers chat.delete with a 5xx', () => {
  it('a blip of about a second (the client retries twice): the stalled process tries again, and the thread shows the answer once', async () => {
    const { h, copies, stalledTs } = await answerTakenBackWhileSlackFails(3);
    await h.settled();
    const standing = copies();
    expect(standing).toHaveLength(1);
    // The copy that stands is the one the process that took over showed: the stalled process removed its own, never both.
    expect(standing[0]!.ts).not.toBe(stalledTs);
  }, 60_000);

  it("an outage outlasting the stalled process's own tries: the take-back kept in Redis is done by a sweep", async () => {
    // The first deletion and three more tries, each with the client's two retries.
    const { h, copies, stalledTs } = await answerTakenBackWhileSlackFails(12);
    await h.settled();
    expect(h.warnings().some((line) => line.includes('"event":"message-delete-failed"'))).toBe(true);
    await waitFor(() => copies().length === 1, { timeoutMs: 30_000, message: 'a sweep to take the answer back' });
    expect(copies()[0]!.ts).not.toBe(stalledTs);
  }, 90_000);
});
