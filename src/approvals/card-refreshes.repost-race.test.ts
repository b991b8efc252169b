import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SlackCallError } from '../errors/countersign-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createCardRefreshes } from './card-refreshes.js';
import { currentVersion } from './input-version.js';
import type { PendingStep } from './pending-step.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { applyCallAction, type CallAction } from './transitions/call-action.js';

/**
 * A card posted again after an edit, Slack refusing for good to update the first one. Review N: a
 * card Slack refuses to update for good (cant_update_message) is posted again by
 * `postCardAgain` from the step as it was read BEFORE the post (`shown`), and recorded with
 * `replaceStepCard`, a compare-and-set on the card's ts only, not on the step's revision. A click on
 * another replica that lands while the post is on its way (Slack slow, a 429's Retry-After waited
 * out per call) is not shown on the new card: nobody draws it again. And a re-post that fails once
 * (Slack failing for now, the store failing its record) must be tried again, not leave the first card,
 * which offers the version before the edit, the only one with buttons.
 */

const refused = () => new SlackCallError({ method: 'chat.update', cause: new Error('An API error occurred: cant_update_message'), tryLater: false });

function barrier() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** `repostFailsOnce`: Slack fails the first re-post for now (`service_unavailable`, nothing posted); `recordFailsOnce`: the store fails its first record (nothing written). */
async function world(options: { repostFailsOnce?: boolean; recordFailsOnce?: boolean } = {}) {
  let clock = 1_000_000;
  const now = () => clock;
  const memory = createMemoryStore({ now });
  let recordFails = options.recordFailsOnce === true;
  const store: StateStore = {
    ...memory,
    replaceStepCard: async (...args) => {
      if (!recordFails) return memory.replaceStepCard(...args);
      recordFails = false;
      throw new Error('Connection is closed.');
    },
  };
  const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ required: 2 }) }]);
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 24 * 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
  await store.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);
  await store.setStepCard(step.stepId, 'card-1');
  /** What each live card in the thread shows: the revision and version its buttons are for, and whether it is pending. */
  const cards = new Map<string, { revision: number; version: number; phase: string }>();
  cards.set('card-1', { revision: 0, version: 0, phase: 'pending' });
  const notices: string[] = [];
  let posts = 1;
  let repostFails = options.repostFailsOnce === true;
  const hooks: { onPost?: (who: string) => Promise<void> } = {};
  const draw = (drawn: PendingStep) => ({ revision: drawn.revision, version: currentVersion(drawn.calls[0]!)?.number ?? 0, phase: drawn.phase });
  const messengerFor = (who: string) => ({
    async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
      // Slack will not update the first card any more, whatever is sent.
      if (drawn.cardTs === 'card-1') throw refused();
      if (cards.has(drawn.cardTs)) cards.set(drawn.cardTs, draw(drawn));
    },
    async updateStepCopy() {},
    async postStepCard({ step: drawn }: { step: PendingStep }) {
      if (repostFails) {
        repostFails = false;
        throw new SlackCallError({ method: 'chat.postMessage', cause: new Error('An API error occurred: service_unavailable'), tryLater: true });
      }
      posts += 1;
      const ts = `card-${posts}`;
      cards.set(ts, draw(drawn));
      await hooks.onPost?.(who);
      return ts;
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
  });
  const takeBacks = {
    async takeBack({ ts }: { ts: readonly string[] }) {
      for (const each of ts) cards.delete(each);
    },
  };
  const logger = pino({ level: 'silent' });
  const pause = async (ms: number) => void (clock += ms);
  const replicaA = createCardRefreshes({ store, messenger: messengerFor('A'), takeBacks, logger, now, pause });
  const replicaB = createCardRefreshes({ store, messenger: messengerFor('B'), takeBacks, logger, now, pause });
  const judge = async (userId: string, action: CallAction) => {
    const current = (await store.getStep(step.stepId))!;
    return applyCallAction(current, { stepId: step.stepId, approvalId: 'apv-1', userId, origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action }, { now: clock, groupMembers: new Map(), newGrantId: randomUUID });
  };
  const act = async (userId: string, action: CallAction) => {
    const result = await judge(userId, action);
    if (!result.ok) throw new Error(result.refusal.message);
    expect(await store.commitStep(result.transition)).toEqual({ result: 'committed' });
  };
  /** Whether an Approve on some live card in the thread would be accepted (each card's buttons are for the version it shows). */
  const someCardApproves = async () => (await Promise.all([...cards.values()].map(({ version }) => judge('UCAROL', { kind: 'approve', version })))).some((result) => result.ok);
  /** Sweeps an hour apart: past any kept pause. */
  const sweepsLater = async () => {
    for (let i = 0; i < 5; i += 1) {
      clock += 3_600_000;
      await replicaA.retryDue();
    }
  };
  return { store, step, cards, notices, hooks, replicaA, replicaB, act, someCardApproves, sweepsLater, kept: () => store.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 100 }) };
}

describe('a card posted again while the step changes on another replica (review N)', () => {
  it('an edit on another replica while the card is posted again: the recorded card still offers version 1, for good', async () => {
    const w = await world();
    const aPosted = barrier();
    const aMayFinish = barrier();
    const bPosted = barrier();
    const aRecorded = barrier();
    w.hooks.onPost = async (who) => {
      if (who === 'A') {
        aPosted.open();
        await aMayFinish.opened;
      } else {
        bPosted.open();
        // B's post comes back after A's record (both posts in flight at once).
        await aRecorded.opened;
      }
    };
    // Replica A: an earlier failed update of the card; its try finds Slack refusing for good, and posts again.
    const a = w.replicaA.redraw({ stepId: w.step.stepId, error: refused() });
    await aPosted.opened;
    // Meanwhile on replica B: an edit to version 2 (its card update is refused too), then its redraw.
    await w.act('UBOB', { kind: 'edit', fromVersion: 0, input: { service: 'api', namespace: 'prod' }, submittedInput: { service: 'api', namespace: 'prod' }, policy: evaluation({ required: 2 }) });
    const b = w.replicaB.redraw({ stepId: w.step.stepId, error: refused() });
    await bPosted.opened;
    aMayFinish.open();
    await a;
    aRecorded.open();
    await b;

    const stored = (await w.store.getStep(w.step.stepId))!;
    expect(currentVersion(stored.calls[0]!)?.number).toBe(1);
    const recorded = stored.cardTs!;
    // Nothing left to draw it again: every refresh is done.
    expect(await w.kept()).toEqual([]);
    // The step's card must offer the version waiting (version 2, number 1), as the feature promises.
    expect({ recordedCardShowsRevision: w.cards.get(recorded)?.revision, version: w.cards.get(recorded)?.version }).toEqual({ recordedCardShowsRevision: stored.revision, version: 1 });
  });

  it('an approval on another replica while the card is posted again: the recorded card keeps live Approve buttons of a decided step, for good', async () => {
    const w = await world();
    const aPosted = barrier();
    const aMayFinish = barrier();
    w.hooks.onPost = async (who) => {
      if (who === 'A') {
        aPosted.open();
        await aMayFinish.opened;
      }
    };
    const a = w.replicaA.redraw({ stepId: w.step.stepId, error: refused() });
    await aPosted.opened;
    // Two approvals on replica B (a copy's buttons, say) complete the step; its update of card-1 is refused,
    // and its own redraw finds the step closed: it only tells the thread.
    await w.act('UBOB', { kind: 'approve', version: 0 });
    await w.act('UCAROL', { kind: 'approve', version: 0 });
    await w.replicaB.redraw({ stepId: w.step.stepId, error: refused() });
    aMayFinish.open();
    await a;

    const stored = (await w.store.getStep(w.step.stepId))!;
    expect(stored.phase).not.toBe('pending');
    expect(await w.kept()).toEqual([]);
    expect({ recordedCard: w.cards.get(stored.cardTs!)?.phase }).toEqual({ recordedCard: stored.phase });
  });
});

describe('a card posted again after an edit, whose re-post fails once', () => {
  const editThenRedraw = async (w: Awaited<ReturnType<typeof world>>) => {
    await w.act('UBOB', { kind: 'edit', fromVersion: 0, input: { service: 'api', namespace: 'prod' }, submittedInput: { service: 'api', namespace: 'prod' }, policy: evaluation({ required: 2 }) });
    // The edit's card update is refused for good: the card is drawn again (here, then by the sweep).
    await w.replicaA.redraw({ stepId: w.step.stepId, error: refused() });
    await w.sweepsLater();
  };

  it('control: a re-post that goes through leaves a card whose Approve is accepted', async () => {
    const w = await world();
    await editThenRedraw(w);
    expect({ cards: Object.fromEntries([...w.cards].map(([ts, card]) => [ts, card.version])), approves: await w.someCardApproves() }).toEqual({ cards: { 'card-1': 0, 'card-2': 1 }, approves: true });
  });

  it.each([
    ['Slack failed for now', { repostFailsOnce: true }],
    ['whose record the store failed once', { recordFailsOnce: true }],
  ])('a re-post %s is tried again: some card in the thread approves the waiting request', async (_, options) => {
    const w = await world(options);
    await editThenRedraw(w);
    expect((await w.store.getStep(w.step.stepId))?.phase).toBe('pending');
    expect({ approves: await w.someCardApproves(), kept: await w.kept() }).toEqual({ approves: true, kept: [] });
  });
});
