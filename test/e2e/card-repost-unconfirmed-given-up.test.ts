import { afterEach, describe, expect, it } from 'vitest';
import { clientLosingCardReply, recordedTakeBacks, startCardRepostScene } from '../helpers/card-repost-scene.js';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';

/**
 * Reviewer: the refresh that carries an unconfirmed re-post inherits the `since` of the refresh that
 * posted it. When that refresh had been failing for most of a day (chat.update 5xx through an outage,
 * then refused for good), the unconfirmed record is given up after a single look made a few seconds
 * later, while the same outage still keeps the thread unreadable: the card Slack did post keeps live
 * buttons, never recorded nor taken back.
 */
const DAY_MS = 86_400_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('unconfirmed re-post of a refresh failing for most of a day', () => {
  it('is recorded or taken back once the thread reads again, not given up after one look', async () => {
    const { slack, client, logger, step, store } = await startCardRepostScene({ cleanups, threadUnreadable: true, stepTtlMs: 3 * DAY_MS });
    const { takeBacks, takenBack } = recordedTakeBacks();
    const lossy = clientLosingCardReply({ client, stepId: step.stepId, applied: true });

    let clock = Date.now();
    const refreshes = createCardRefreshes({ store, messenger: createWebApiMessenger({ client: lossy.client, logger }), takeBacks, logger, now: () => clock, pause: async () => {} });
    // A refresh kept for this card since ~23h59m30s ago (its update failed with 5xx all along), due now.
    await store.scheduleCardRefresh({ stepId: step.stepId, since: clock - DAY_MS + 30_000 }, clock);
    await refreshes.retryDue();
    expect(lossy.lost()).toMatch(/^\d+\.\d+$/);
    expect(await store.dueCardRefreshes({ now: clock + DAY_MS, limit: 10 })).toHaveLength(1);

    // The sweep's first look, a minute later: the outage still keeps the thread unreadable.
    clock += 60_000;
    await refreshes.retryDue();
    // The thread reads again; sweeps go on.
    slack.failWhen('conversations.replies', undefined);
    for (let i = 0; i < 3; i += 1) {
      clock += 3_600_000;
      await refreshes.retryDue();
    }
    const cardTs = (await store.getStep(step.stepId))?.cardTs;
    const lost = lossy.lost();
    expect({ appliedRecordedOrTakenBack: cardTs === lost || takenBack.includes(lost!) }).toEqual({ appliedRecordedOrTakenBack: true });
  });
});
