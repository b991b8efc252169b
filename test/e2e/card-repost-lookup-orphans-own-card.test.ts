import { afterEach, describe, expect, it } from 'vitest';
import { CARD_REPOST_CHANNEL, clientLosingCardReply, recordedTakeBacks, startCardRepostScene } from '../helpers/card-repost-scene.js';
import { deferred } from '../helpers/deferred.js';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';

/**
 * Review U (c1e7c4a). Replica B posts the card again; Slack APPLIES it (card B1) but the reply is lost
 * (502). Meanwhile replica A posts its own card again (A1, newer than B1) and records it. B's lost-reply
 * lookup takes the NEWEST matching card, A1, for its own; replaceStepCard(old -> A1) now answers true
 * (A1 is on record), so B neither records nor takes back B1: a second card with live buttons is left in
 * the thread for good, never updated when the request is decided (only the card on record is).
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('two replicas posting the same card again, the loser\'s post applied but its reply lost (review U)', () => {
  it('the loser\'s own applied card is recorded or taken back, not left live beside the one on record', async () => {
    const { slack, client, logger, messenger, threadTs, step, store, firstCardTs: first } = await startCardRepostScene({ cleanups });
    const { takeBacks, takenBack } = recordedTakeBacks();

    // B's client: its card post is applied by Slack, then (after A has posted and recorded its own) the reply is lost.
    const bPosted = deferred();
    const aDone = deferred();
    const clientB = clientLosingCardReply({
      client,
      stepId: step.stepId,
      applied: true,
      beforeReplyLost: async () => {
        bPosted.resolve();
        await aDone.promise;
      },
    });
    const messengerB = createWebApiMessenger({ client: clientB.client, logger });

    const replicaA = createCardRefreshes({ store, messenger, takeBacks, logger, pause: async () => {} });
    const replicaB = createCardRefreshes({ store, messenger: messengerB, takeBacks, logger, pause: async () => {} });

    const b = replicaB.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    await bPosted.promise;
    const bCard = clientB.lost();
    await replicaA.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    const recordedByA = (await store.getStep(step.stepId))!.cardTs!;
    expect(recordedByA).not.toBe(first);
    expect(bCard).toBeDefined();
    expect(recordedByA).not.toBe(bCard);
    aDone.resolve();
    await b;

    const stored = (await store.getStep(step.stepId))!;
    const bCardStillInThread = slack.messages(CARD_REPOST_CHANNEL, threadTs).some((message) => message.ts === bCard);
    expect({
      recorded: stored.cardTs,
      bCardInThread: bCardStillInThread,
      bCardRecordedOrTakenBack: stored.cardTs === bCard || takenBack.includes(bCard!),
    }).toEqual({ recorded: recordedByA, bCardInThread: true, bCardRecordedOrTakenBack: true });
  });
});
