import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SlackCallError } from '../errors/countersign-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createCardRefreshes } from './card-refreshes.js';
import type { PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';
import { applyCallAction } from './transitions/call-action.js';

const rateLimited = () => new SlackCallError({ method: 'chat.update', cause: new Error('A rate limit was exceeded (retry-after: 3)'), tryLater: true, retryAfterMs: 3_000 });
const refused = () => new SlackCallError({ method: 'chat.update', cause: new Error('An API error occurred: invalid_blocks'), tryLater: false });

/**
 * Card refreshes over a Slack whose card updates fail as `updates` says (one error per try, then
 * success), on a clock the pauses move: nothing here waits in real time.
 */
async function world(options: { updates: Error[]; step?: PendingStep; repostFails?: boolean; whileReposting?: (store: ReturnType<typeof createMemoryStore>) => Promise<unknown> }) {
  let clock = 1_000_000;
  const now = () => clock;
  const store = createMemoryStore({ now });
  const step = options.step ?? makeStep(['apv-1']);
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60 * 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
  await store.setStepCard(step.stepId, 'card-1');
  const failures = [...options.updates];
  const shown: Array<{ ts: string; revision: number }> = [];
  const posted: string[] = [];
  const notices: string[] = [];
  const takenBack: string[] = [];
  const messenger = {
    async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
      const failure = failures.shift();
      if (failure) throw failure;
      shown.push({ ts: drawn.cardTs, revision: drawn.revision });
    },
    async updateStepCopy() {},
    async postStepCard() {
      if (options.repostFails) throw refused();
      await options.whileReposting?.(store);
      posted.push(`card-${posted.length + 2}`);
      return posted.at(-1)!;
    },
    async findPostedCard() {
      return undefined;
    },
    async permalinkOf() {
      return undefined;
    },
    async postNotice({ text }: { text: string }) {
      notices.push(text);
    },
  };
  const pauses: number[] = [];
  const pause = async (ms: number) => {
    pauses.push(ms);
    clock += ms;
  };
  const takeBacks = {
    async takeBack({ ts }: { ts: readonly string[] }) {
      takenBack.push(...ts);
    },
  };
  const refreshes = createCardRefreshes({ store, messenger, takeBacks, logger: pino({ level: 'silent' }), now, pause });
  return {
    store,
    step,
    refreshes,
    shown,
    posted,
    notices,
    takenBack,
    pauses,
    advance: (ms: number) => (clock += ms),
    kept: () => store.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 100 }),
  };
}

describe('drawing again a card Slack would not update', () => {
  it('tries again here, not before a rate limit ends, and keeps nothing once the card is shown', async () => {
    const w = await world({ updates: [rateLimited()] });
    await w.refreshes.redraw({ stepId: w.step.stepId, error: rateLimited() });
    expect(w.pauses).toEqual([3_000, 3_000]);
    expect(w.shown).toEqual([{ ts: 'card-1', revision: 0 }]);
    expect(await w.kept()).toEqual([]);
  });

  it('keeps what Slack still fails for the sweep, which draws the card once Slack is back', async () => {
    const w = await world({ updates: [rateLimited(), rateLimited(), rateLimited()] });
    await w.refreshes.redraw({ stepId: w.step.stepId, error: rateLimited() });
    expect(w.shown).toEqual([]);
    expect(await w.kept()).toHaveLength(1);
    // Not the sweep's while this process may still be trying.
    await w.refreshes.retryDue();
    expect(w.shown).toEqual([]);
    w.advance(15_000);
    await w.refreshes.retryDue();
    expect(w.shown).toEqual([{ ts: 'card-1', revision: 0 }]);
    expect(await w.kept()).toEqual([]);
  });

  it('posts an open request\'s card again when Slack refuses its update for good, records it, and tells the thread', async () => {
    const w = await world({ updates: [refused()] });
    await w.refreshes.redraw({ stepId: w.step.stepId, error: refused() });
    expect(w.posted).toEqual(['card-2']);
    expect((await w.store.getStep(w.step.stepId))?.cardTs).toBe('card-2');
    expect(w.notices).toEqual([expect.stringContaining('Slack would not update the earlier approval card')]);
    // Without the step's state (the card just above shows it): an owed notice drawn from a step changed since would differ, and be told again.
    expect(w.notices[0]).not.toContain('Now:');
    expect(await w.kept()).toEqual([]);
    // From then on the step's changes are shown on the new card.
    await w.refreshes.redraw({ stepId: w.step.stepId, error: rateLimited() });
    expect(w.shown.at(-1)).toEqual({ ts: 'card-2', revision: 0 });
  });

  it('tells the thread what became of the request when the card cannot be posted again either', async () => {
    const w = await world({ updates: [refused()], repostFails: true });
    await w.refreshes.redraw({ stepId: w.step.stepId, error: refused() });
    expect((await w.store.getStep(w.step.stepId))?.cardTs).toBe('card-1');
    expect(w.notices).toEqual([expect.stringContaining('Slack would not update the approval card above')]);
    expect(await w.kept()).toEqual([]);
  });

  it('keeps for the sweep a card posted again that could not be drawn as the step changed while it was posted', async () => {
    // An approval lands while the card is posted again; the new card's update to show it is rate-limited.
    const approve = async (store: ReturnType<typeof createMemoryStore>) => {
      const current = (await store.getStep(w.step.stepId))!;
      const origin = { teamId: current.teamId, channel: current.channel, membership: 'member' as const };
      const result = applyCallAction(current, { stepId: current.stepId, approvalId: 'apv-1', userId: 'UBOB', origin, action: { kind: 'approve', version: 0 } }, { now: 1, groupMembers: new Map(), newGrantId: () => 'grant-1' });
      if (!result.ok) throw new Error(result.refusal.message);
      await store.commitStep(result.transition);
    };
    const w = await world({ updates: [refused(), rateLimited()], whileReposting: approve });
    await w.refreshes.redraw({ stepId: w.step.stepId, error: refused() });
    expect((await w.store.getStep(w.step.stepId))?.cardTs).toBe('card-2');
    expect(w.shown).toEqual([]);
    expect(await w.kept()).toHaveLength(1);
    await w.refreshes.retryDue();
    expect(w.shown).toEqual([{ ts: 'card-2', revision: 1 }]);
    expect(await w.kept()).toEqual([]);
  });

  it('takes back the card it posted again when another was recorded first, and leaves the notice to that one', async () => {
    // Another process posted the card again and recorded it while this one's post was on its way.
    const w = await world({ updates: [refused()], whileReposting: (store) => store.replaceStepCard(w.step.stepId, { from: 'card-1', to: 'card-9' }) });
    await w.refreshes.redraw({ stepId: w.step.stepId, error: refused() });
    expect(w.takenBack).toEqual(['card-2']);
    expect((await w.store.getStep(w.step.stepId))?.cardTs).toBe('card-9');
    expect(w.notices).toEqual([]);
  });
});
