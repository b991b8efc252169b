import { describe, expect, it } from 'vitest';
import { useUnconfirmedCardRepost } from '../helpers/unconfirmed-card-repost.js';

/**
 * Two replicas settle the same card re-post whose reply was lost while the thread could not be read (the
 * scene of card-repost-unconfirmed-settled.test.ts): when one replica's look at the thread outlasts its
 * claim, the other settles the record meanwhile, and the thread is still told only once that the card was
 * posted again.
 */

const setUp = useUnconfirmedCardRepost();

describe('two replicas settle the same unconfirmed re-post', () => {
  it('tells the thread once that the card was posted again, when a slow look outlasts its claim', async () => {
    const t = await setUp({ applied: true });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    const applied = t.lost();
    expect(applied).toMatch(/^\d+\.\d+$/);
    t.slack.failWhen('conversations.replies', undefined);

    // Replica 1's look at the thread is slow (a 429 waited out by its own call): its claim lapses meanwhile.
    let entered!: () => void;
    const inLook = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const replica1 = t.makeRefreshes({
      find: async (original) => {
        const found = await original();
        entered();
        await released;
        return found;
      },
    });
    const replica2 = t.makeRefreshes();

    t.advance(60_000);
    const sweep1 = replica1.retryDue();
    await inLook;
    // Past replica 1's claim (as long as the work has failed: ~60 s here): replica 2's sweep claims the same record and settles it.
    t.advance(90_000);
    await replica2.retryDue();
    expect((await t.store.getStep(t.step.stepId))?.cardTs).toBe(applied);
    release();
    await sweep1;

    expect({ cardTs: (await t.store.getStep(t.step.stepId))?.cardTs, notices: t.notices() }).toEqual({
      cardTs: applied,
      notices: [expect.stringContaining('so it is posted again just above')],
    });
  });
});
