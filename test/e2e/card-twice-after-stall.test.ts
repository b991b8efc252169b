import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * Review (take-backs). step-card.ts postThreadCard posts the card (guarded by the lease) and only then
 * records its ts (`setStepCard`, an unfenced HSET). A process that stalls between the two (a GC pause,
 * a slow Redis) loses its lock; the process that takes the item over finds the step with no card ts
 * (continueInterrupted → postUnpostedCard) and posts a second card. The woken process is fenced at its
 * finish, but nothing takes its card back (the take-backs cover answer text only), and its late
 * setStepCard overwrites the new holder's card ts. The thread shows two approval cards for one step;
 * once the step is decided only the recorded one is refreshed, the other keeps live Approve/Edit/Deny
 * buttons.
 */
const harness = useHarnesses();

const restartCall = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('a process that stalls right after posting a card, before recording its ts', () => {
  it('the thread shows one card, and none keeps live buttons after the decision', async () => {
    const control = { stalling: false, reached: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
        ...store,
        async setStepCard(stepId, cardTs, link) {
          if (!control.stalling) {
            control.stalling = true;
            control.reached.resolve();
            await control.released.promise;
          }
          return store.setStepCard(stepId, cardTs, link);
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

    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    await control.reached.promise;
    const cards = () => threadReplies(h, threadTs).filter((message) => cardButtons(message.blocks).length > 0);
    expect(cards()).toHaveLength(1);
    // The replica takes the item over once the lock lapses; it finds the step without a card ts.
    await waitFor(() => cards().length >= 2, { timeoutMs: 15_000, message: 'the replica to post the card again' }).catch(() => undefined);
    control.released.resolve();
    await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-fenced"')), { timeoutMs: 15_000, message: 'the stalled process to find itself fenced' });
    await h.settled();

    const standing = cards();
    // Bob approves on the first card; the step resumes and runs once.
    const approve = cardButtons(standing[0]!.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: standing[0]!.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    await h.settled();
    const live = h.slack.messages(CHANNEL, threadTs).filter((message) => cardButtons(message.blocks).length > 0);
    expect({ cardsBeforeDecision: standing.length, cardsWithLiveButtonsAfter: live.length }).toEqual({ cardsBeforeDecision: 1, cardsWithLiveButtonsAfter: 0 });
  }, 60_000);
});
