import { describe, expect, it } from 'vitest';
import { CARD_REPOST_CHANNEL } from '../helpers/card-repost-scene.js';
import { useUnconfirmedCardRepost } from '../helpers/unconfirmed-card-repost.js';

/**
 * A card posted again whose reply was lost while the thread could not be read (the reviewer's
 * card-repost-lost-reply-unreadable-thread.test.ts) is kept for a later look, by its post's mark: no
 * other card is posted while the thread stays unreadable; once it reads, the card Slack posted is
 * recorded as the step's, or taken back if another card was recorded meanwhile, and a post Slack did
 * not apply is made again.
 */

const setUp = useUnconfirmedCardRepost();

describe('card posted again, reply lost, thread unreadable: settled by a later sweep', () => {
  it('posts no other card while the thread stays unreadable, then records the card Slack posted', async () => {
    const t = await setUp({ applied: true });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    const applied = t.lost();
    expect(applied).toMatch(/^\d+\.\d+$/);
    expect(await t.kept()).toHaveLength(1);
    expect(t.notices()).toEqual([]);

    // Still unreadable: looked for again later, nothing posted.
    await t.sweepLater();
    expect(t.cardsPosted()).toBe(2);
    expect(await t.kept()).toHaveLength(1);

    t.slack.failWhen('conversations.replies', undefined);
    await t.sweepLater();
    expect({ cardTs: (await t.store.getStep(t.step.stepId))?.cardTs, cardsPosted: t.cardsPosted(), takenBack: t.takenBack, kept: await t.kept() }).toEqual({
      cardTs: applied,
      cardsPosted: 2,
      takenBack: [],
      kept: [],
    });
    expect(t.notices()).toEqual([expect.stringContaining('so it is posted again just above')]);
  });

  it('takes the card Slack posted back when another card was recorded for the step meanwhile', async () => {
    const t = await setUp({ applied: true });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    // Another replica posted the card again and recorded it.
    expect(await t.store.replaceStepCard(t.step.stepId, { from: t.first, to: '1700000099.000100' })).toBe(true);
    t.slack.failWhen('conversations.replies', undefined);
    await t.sweepLater();
    expect({ cardTs: (await t.store.getStep(t.step.stepId))?.cardTs, takenBack: t.takenBack, kept: await t.kept() }).toEqual({
      cardTs: '1700000099.000100',
      takenBack: [t.lost()],
      kept: [],
    });
  });

  it('posts the card again when the thread, read at last, shows Slack did not post it', async () => {
    const t = await setUp({ applied: false });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    expect(t.lost()).toBe('not-applied');
    expect(await t.kept()).toHaveLength(1);
    t.slack.failWhen('conversations.replies', undefined);
    await t.sweepLater();
    const cardTs = (await t.store.getStep(t.step.stepId))?.cardTs;
    expect(cardTs).not.toBe(t.first);
    expect(t.slack.messages(CARD_REPOST_CHANNEL).some((message) => message.ts === cardTs)).toBe(true);
    expect({ cardsPosted: t.cardsPosted(), kept: await t.kept() }).toEqual({ cardsPosted: 2, kept: [] });
    expect(t.notices()).toEqual([expect.stringContaining('so it is posted again just above')]);
  });
});
