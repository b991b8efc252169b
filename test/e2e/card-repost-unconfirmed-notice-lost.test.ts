import { describe, expect, it } from 'vitest';
import { useUnconfirmedCardRepost } from '../helpers/unconfirmed-card-repost.js';

/**
 * Review of 783d388: a card posted again whose reply was lost is found by a later sweep and recorded,
 * but the "posted again just above" notice fails (Slack 503). The refresh is kept and tried again; the
 * retry finds the card on record and (since 783d388) says nothing, so the thread is left with a second
 * card and no word of why. Before 783d388 the retry recorded it again (true for `to` on record) and told the thread.
 */

const setUp = useUnconfirmedCardRepost();

describe('card posted again, reply lost, found later: the notice that failed', () => {
  it('is posted by a later sweep', async () => {
    const t = await setUp({ applied: true });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    const applied = t.lost();
    expect(applied).toMatch(/^\d+\.\d+$/);

    t.slack.failWhen('conversations.replies', undefined);
    // The thread reads now, but Slack fails the notice.
    t.slack.failWhen('chat.postMessage', (call) => String(call.args.text ?? '').startsWith(':warning:'), { status: 503 });
    await t.sweepLater();
    expect((await t.store.getStep(t.step.stepId))?.cardTs).toBe(applied);
    expect(t.notices()).toEqual([]);
    // The refresh is still kept (the notice is owed).
    expect(await t.kept()).toHaveLength(1);

    t.slack.failWhen('chat.postMessage', undefined);
    await t.sweepLater();
    await t.sweepLater();
    expect({ cardTs: (await t.store.getStep(t.step.stepId))?.cardTs, kept: await t.kept(), notices: t.notices() }).toEqual({
      cardTs: applied,
      kept: [],
      notices: [expect.stringContaining('so it is posted again just above')],
    });
  });

  it('is told once when its post lost its reply (a 502: Slack posted it): the later sweep finds it', async () => {
    const t = await setUp({ applied: true, noticeReplyLost: true });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    const applied = t.lost();
    expect(applied).toMatch(/^\d+\.\d+$/);

    t.slack.failWhen('conversations.replies', undefined);
    for (let i = 0; i < 4; i += 1) await t.sweepLater();
    expect({ cardTs: (await t.store.getStep(t.step.stepId))?.cardTs, kept: await t.kept(), notices: t.notices() }).toEqual({
      cardTs: applied,
      kept: [],
      notices: [expect.stringContaining('so it is posted again just above')],
    });
  });

  it('is told once by two replicas when one claim lapses while its notice post is slow', async () => {
    const t = await setUp({ applied: true });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    const applied = t.lost();
    expect(applied).toMatch(/^\d+\.\d+$/);
    // The thread reads; the notice fails: the card is recorded and the notice is owed.
    t.slack.failWhen('conversations.replies', undefined);
    t.slack.failWhen('chat.postMessage', (call) => String(call.args.text ?? '').startsWith(':warning:'), { status: 503 });
    await t.sweepLater();
    expect((await t.store.getStep(t.step.stepId))?.cardTs).toBe(applied);
    t.slack.failWhen('chat.postMessage', undefined);

    // Replica A's notice post is slow (held until released), past its claim (5 s for a record 5 s old).
    let entered!: () => void;
    const inPost = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const replicaA = t.makeRefreshes({
      postNotice: async (original) => {
        entered();
        await released;
        return original();
      },
    });
    t.advance(5_000);
    const sweepA = replicaA.retryDue();
    await inPost;
    t.advance(6_000);
    // The scene's own refreshes, another replica: they claim the owed notice, tell the thread and forget it.
    await t.refreshes.retryDue();
    release();
    await sweepA;

    expect({ kept: await t.kept(), notices: t.notices() }).toEqual({ kept: [], notices: [expect.stringContaining('so it is posted again just above')] });
  });
});
