import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * run-and-publish.ts posts the model's text before a card whole (a quick reply) and then
 * opens the step under `takingBackIfFenced(takeBack, () => cards.openStep(...))`: refused as fenced,
 * the text is deleted, "since the thread's new holder runs the turn again and shows it". b041c2e made
 * the saves that carry such a take-back named writes, because ioredis sends a command whose reply was
 * lost again on its new connection, and once another process holds the thread that resend is refused
 * as fenced although the first send was written. openStep's write (CREATE_STEP_SCRIPT) got no name:
 * when it landed, its reply was lost and the resend was fenced, the text is deleted while the stored
 * thread holds the step (and the text in its history); the new holder only posts the card
 * (continueInterrupted → postUnpostedCard), so the text is shown nowhere ("once, never none", 0ef1072).
 *
 * Modelled as the other stall tests model it: the doomed bot's createStep lands, then its connection
 * is "down" (its lock renewals wait too) until the replica has taken the thread over and posted the
 * card; then the client's resend of the same write reaches Redis (refused as fenced).
 */
const harness = useHarnesses();

describe('the text before a card, when the step write landed but its reply was lost and the resend was fenced', () => {
  it('still shows once in the thread (it is the only copy)', async () => {
    const control = { stalling: false, reached: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
        ...store,
        async createStep(options) {
          await store.createStep(options);
          if (control.stalling) return;
          // Written; the reply is lost. The client reconnects only after the lock lapsed and the replica took the thread.
          control.stalling = true;
          control.reached.resolve();
          await control.released.promise;
          // ioredis's resend of the same command on its new connection.
          return store.createStep(options);
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

    const text = 'I will restart the worker in prod now.';
    h.openai.enqueue({ text, toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    await control.reached.promise;
    expect(threadReplies(h, threadTs).filter((message) => message.text === text)).toHaveLength(1);
    // The replica takes the item over once the lock lapses: it finds the step saved and posts its card.
    await waitFor(() => threadReplies(h, threadTs).some((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 15_000, message: "the replica's card" });
    control.released.resolve();
    await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-fenced"')), { timeoutMs: 15_000, message: 'the stalled process to find itself fenced' });
    await h.settled();

    const texts = threadReplies(h, threadTs).map((message) => message.text);
    expect(texts.filter((each) => each === text), `thread: ${JSON.stringify(texts)}`).toHaveLength(1);
  }, 60_000);
});
