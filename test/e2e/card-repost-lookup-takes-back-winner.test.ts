import { afterEach, describe, expect, it } from 'vitest';
import { recordedTakeBacks, startCardRepostScene } from '../helpers/card-repost-scene.js';
import { deferred } from '../helpers/deferred.js';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';

/**
 * Review S. Two replicas post the same card again (each had an update of the step's card refused for
 * good; or two sweeps that both "claimed" the refresh). Replica A posts card X and records it. Replica B,
 * which read the step before A's record, posts too; its post meets a 502 and is not applied, so
 * postStepCard looks for it among the thread's cards newer than the old one with the same text and step
 * id, and finds A's card X. B's replaceStepCard(old → X) then fails (X is on record already), and
 * postCardAgain takes back X: the card ON RECORD for the still-pending step, the only one with live
 * buttons, is deleted, and its refresh is forgotten: nobody posts another.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('two replicas posting the same card again (review S)', () => {
  it('the loser, whose post lost its reply, does not take back the card the winner recorded', async () => {
    // Slack will not update the first card any more.
    const { slack, logger, messenger, step, store, firstCardTs: first } = await startCardRepostScene({ cleanups });
    const { takeBacks, takenBack } = recordedTakeBacks();

    // Replica B has read the step (card = first) and is about to update it when replica A's redraw runs.
    const bRead = deferred();
    const aDone = deferred();
    const messengerB = {
      ...messenger,
      async updateStepCard(options: { step: PendingStep & { cardTs: string } }) {
        bRead.resolve();
        await aDone.promise;
        // A's card is on record now; B's post (after this refused update) meets a 502 and is not applied.
        slack.failNext('chat.postMessage', { status: 502 });
        return messenger.updateStepCard(options);
      },
    };
    const replicaA = createCardRefreshes({ store, messenger, takeBacks, logger, pause: async () => {} });
    const replicaB = createCardRefreshes({ store, messenger: messengerB, takeBacks, logger, pause: async () => {} });

    const b = replicaB.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    await bRead.promise;
    await replicaA.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    const recordedByA = (await store.getStep(step.stepId))!.cardTs!;
    expect(recordedByA).not.toBe(first);
    aDone.resolve();
    await b;

    const stored = (await store.getStep(step.stepId))!;
    expect(stored.phase).toBe('pending');
    const kept = await store.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 10 });
    // The pending step's card on record must not have been taken back (or something must still redraw it).
    expect({ recorded: stored.cardTs, recordedCardTakenBack: takenBack.includes(stored.cardTs!), refreshesKept: kept.length }).toEqual({
      recorded: recordedByA,
      recordedCardTakenBack: false,
      refreshesKept: 0,
    });
  });
});
