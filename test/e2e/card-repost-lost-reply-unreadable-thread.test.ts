import { afterEach, describe, expect, it } from 'vitest';
import { CARD_REPOST_CHANNEL, clientLosingCardReply, recordedTakeBacks, startCardRepostScene } from '../helpers/card-repost-scene.js';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';

/**
 * Review: a card posted again (card refresh) that Slack APPLIED but whose reply was lost (502), while the
 * thread cannot be read for the lost-reply lookup (the same outage): postStepCard rethrows, postCardAgain
 * takes it for "not posted", the thread is told the card "above" may be stale, and the refresh is forgotten
 * ('told'). The applied card is neither recorded nor taken back: a second card with live buttons stays in
 * the thread for good, never updated when the request is decided.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('card posted again, reply lost, thread unreadable for the lookup', () => {
  it('the applied card is recorded, taken back, or its refresh kept for a later try', async () => {
    // The outage: the thread cannot be read.
    const { slack, client, logger, threadTs, step, store } = await startCardRepostScene({ cleanups, threadUnreadable: true });
    const { takeBacks, takenBack } = recordedTakeBacks();
    // The card's post is applied by Slack, then its reply is lost.
    const lossy = clientLosingCardReply({ client, stepId: step.stepId, applied: true });

    const refreshes = createCardRefreshes({ store, messenger: createWebApiMessenger({ client: lossy.client, logger }), takeBacks, logger, pause: async () => {} });
    await refreshes.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    const applied = lossy.lost();

    expect(applied).toBeDefined();
    const stored = (await store.getStep(step.stepId))!;
    const stillKept = (await store.dueCardRefreshes({ now: Date.now() + 86_400_000, limit: 10 })).length > 0;
    const appliedInThread = slack.messages(CARD_REPOST_CHANNEL, threadTs).some((message) => message.ts === applied);
    expect({
      appliedInThread,
      appliedCardRecordedOrTakenBackOrRefreshKept: stored.cardTs === applied || takenBack.includes(applied!) || stillKept,
    }).toEqual({ appliedInThread: true, appliedCardRecordedOrTakenBackOrRefreshKept: true });
  });
});
