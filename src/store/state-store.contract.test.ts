import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import type { AuditLog } from '../audit/audit-log.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { createRedisAuditLog } from './redis-audit-log.js';
import type { Grant } from '../approvals/grant.js';
import { PENDING_STEP_SCHEMA_VERSION, type PendingStep } from '../approvals/pending-step.js';
import { evaluation, makeStep } from '../approvals/pending-step.test-support.js';
import { applyCallAction, type CallAction } from '../approvals/transitions/call-action.js';
import { claimResumeTransition, closeLostThreadTransition, expireTransition, rejudgeResumeTransition, supersedeTransition } from '../approvals/transitions/close-step.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { escalateTransition } from '../approvals/transitions/escalate.js';
import { ErrorCode } from '../errors/countersign-error.js';
import { FencedError } from './fenced-error.js';
import { createMemoryStore } from './memory-store.js';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { newStepId } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import type { Fence, StateStore } from './state-store.js';
import { newThreadState, THREAD_STATE_SCHEMA_VERSION, type ThreadState } from './thread-state.js';

const TTL = 60_000;
/** Numbers the Slack-shaped thread timestamps the tests draw, so that no two tests share a thread. */
let threadCounter = 0;
/** The first hop's time of a ladder for a step made by `makeStep` (created at its fixed time). */
const step0 = (ladder: ReadonlyArray<{ afterMs: number }>) => makeStep(['x']).createdAt + ladder[0]!.afterMs;
const silent = pino({ level: 'silent' });

/** `clock`: the store's own clock (the memory store's `now`, Redis's `TIME` through `serverClock`), for a case that moves it. */
type StoreFactory = (options?: { clock?: () => number }) => { store: StateStore; audit: AuditLog };

function createStores(): Array<[string, StoreFactory]> {
  return [
    [
      'memory',
      ({ clock } = {}) => {
        const audit = createMemoryAuditLog({ logger: silent });
        return { store: createMemoryStore({ audit, ...(clock ? { now: clock } : {}) }), audit };
      },
    ],
    [
      'redis',
      ({ clock } = {}) => {
        const keyPrefix = `test:${randomUUID()}:`;
        return { store: createRedisStore({ url: inject('redisUrl'), keyPrefix, ...(clock ? { serverClock: clock } : {}) }), audit: createRedisAuditLog({ url: inject('redisUrl'), keyPrefix, logger: silent }) };
      },
    ],
    [
      // Every script must touch one slot (CROSSSLOT otherwise) and every sweep cover every shard.
      'redis cluster',
      ({ clock } = {}) => {
        const keyPrefix = `test:${randomUUID()}:`;
        const target = parseRedisTarget(inject('redisClusterUrl')) as RedisTarget;
        return { store: createRedisStore({ target, keyPrefix, ...(clock ? { serverClock: clock } : {}) }), audit: createRedisAuditLog({ target, keyPrefix, logger: silent }) };
      },
    ],
  ];
}

describe.each(createStores())('%s state store', (name, create) => {
  const { store, audit } = create();
  afterAll(async () => {
    await store.close();
    await audit.close();
  });

  const lock = async (threadKey: string, ttlMs = TTL, on: StateStore = store): Promise<Fence> => ({ threadKey, token: (await on.tryLock(threadKey, ttlMs))! });

  /**
   * Stores a new step (and its thread) the way a turn does, under a fresh lock on its thread (in
   * the step's channel), with an id from `newStepId` as a turn gives it.
   */
  async function createStep(template: PendingStep, on: StateStore = store): Promise<PendingStep> {
    const threadKey = `${template.teamId}:${template.channel}:${template.threadTs}`;
    const fence = await lock(`${threadKey}-${randomUUID()}`, TTL, on);
    const step = { ...template, threadKey, stepId: newStepId(threadKey) };
    const thread = { ...newThreadState(step, 1), threadKey: fence.threadKey, pendingStepId: step.stepId };
    await on.createStep({ step, thread, ttlMs: TTL, audit: [{ type: 'expired', stepId: step.stepId, approvalId: 'x', toolName: 'marker' }], fence });
    return step;
  }

  const act = (stepId: string, userId: string, action: CallAction, clock: { now?: number; newGrantId?: () => string; on?: StateStore } = {}) =>
    commitTransition(clock.on ?? store, stepId, (step) => {
      const result = applyCallAction(step, { stepId, approvalId: step.calls[0]!.approvalId, userId, origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action }, { now: clock.now ?? Date.now(), groupMembers: new Map(), newGrantId: clock.newGrantId ?? randomUUID });
      return result.ok ? result.transition : undefined;
    });

  it('claims a delivery once, and refuses when any of several keys was seen', async () => {
    expect(await store.claimOnce(['event:Ev1'], TTL)).toBe(true);
    expect(await store.claimOnce(['event:Ev1'], TTL)).toBe(false);
    expect(await store.claimOnce(['event:Ev2', 'message:C1:1.1'], TTL)).toBe(true);
    expect(await store.claimOnce(['event:Ev3', 'message:C1:1.1'], TTL)).toBe(false);
  });

  it("takes a key its claimant already holds as its own (a claim resent after its reply was lost), not another's", async () => {
    expect(await store.claimOnce(['event:Ev4', 'post:C1:4.4'], TTL, { claimant: 'delivery-a' })).toBe(true);
    expect(await store.claimOnce(['event:Ev4', 'post:C1:4.4'], TTL, { claimant: 'delivery-a' })).toBe(true);
    expect(await store.claimOnce(['event:Ev4'], TTL, { claimant: 'delivery-b' })).toBe(false);
    expect(await store.claimOnce(['event:Ev4'], TTL)).toBe(false);
    expect(await store.claimOnce(['event:Ev5', 'post:C1:4.4'], TTL, { claimant: 'delivery-c' })).toBe(false);
  });

  it('remembers a deleted post, apart from its delivery and from other posts', async () => {
    const post = { channel: 'C1', ts: '1700000000.000100' };
    expect(await store.wasDeleted(post)).toBe(false);
    await store.markDeleted(post, TTL);
    await store.markDeleted(post, TTL);
    expect(await store.wasDeleted(post)).toBe(true);
    expect(await store.wasDeleted({ channel: 'C2', ts: post.ts })).toBe(false);
    expect(await store.claimOnce([`post:${post.channel}:${post.ts}`], TTL)).toBe(true);
  });

  it('reads a thread and whether a post was deleted together, as each reads alone', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const post = { channel: 'C1', ts: `${Date.now()}.000200` };
    expect(await store.getThreadAndDeletion(threadKey, post)).toEqual({ thread: undefined, deleted: false });
    const fence = await lock(threadKey);
    await store.saveThread({ ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey, messages: [{ role: 'user', content: 'restart it' }] }, TTL, fence);
    await store.markDeleted(post, TTL);
    const both = await store.getThreadAndDeletion(threadKey, post);
    expect(both.thread).toEqual(await store.getThread(threadKey));
    expect(both.thread?.messages).toEqual([{ role: 'user', content: 'restart it' }]);
    expect(both.deleted).toBe(true);
    expect((await store.getThreadAndDeletion(threadKey, { channel: 'C2', ts: post.ts })).deleted).toBe(false);
  });

  it('starts following a thread once and never overwrites its history', async () => {
    const fence = await lock(`T1:C1:${randomUUID()}`);
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey: fence.threadKey };
    expect(await store.createThreadIfAbsent(thread, TTL)).toBe(true);
    await store.saveThread({ ...thread, messages: [{ role: 'user', content: 'hi' }] }, TTL, fence);
    expect(await store.createThreadIfAbsent(thread, TTL)).toBe(false);
    expect((await store.getThread(thread.threadKey))?.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('keeps the thread a step waits in as long as the step, whatever shorter life a later save gives it', async () => {
    const shortMs = 200;
    const template = makeStep(['apv-1']);
    // In the step's channel: a Cluster keeps a step and its channel's index in one slot.
    const waiting = await lock(`${template.teamId}:${template.channel}:${randomUUID()}`);
    const step = { ...template, threadKey: waiting.threadKey, stepId: newStepId(waiting.threadKey) };
    const thread = { ...newThreadState(step, 1), threadKey: waiting.threadKey, pendingStepId: step.stepId };
    await store.createStep({ step, thread, ttlMs: TTL, audit: [], fence: waiting });
    await store.saveThread({ ...thread, messages: [{ role: 'user', content: 'still waiting' }] }, shortMs, waiting);
    // Barrier: a thread saved after it, for as short, lapses.
    const other = await lock(`${template.teamId}:${template.channel}:${randomUUID()}`);
    await store.saveThread({ ...newThreadState(step, 1), threadKey: other.threadKey }, shortMs, other);
    await vi.waitFor(async () => expect(await store.getThread(other.threadKey)).toBeUndefined(), { timeout: 5_000, interval: 20 });
    expect(await store.getThread(waiting.threadKey)).toMatchObject({ pendingStepId: step.stepId, messages: [{ role: 'user', content: 'still waiting' }] });
    expect(await store.getStep(step.stepId)).toBeDefined();
  });

  it('keeps a thread whose step was resumed, and the step, no longer than the TTL the claim gives', async () => {
    const shortMs = 200;
    const template = makeStep(['apv-1']);
    const holder = await lock(`${template.teamId}:${template.channel}:${randomUUID()}`);
    const step = { ...template, threadKey: holder.threadKey, stepId: newStepId(holder.threadKey) };
    const thread = { ...newThreadState(step, 1), threadKey: holder.threadKey, pendingStepId: step.stepId };
    // Kept long while the request waits (`stepRecordTtlMs`), as for a request decided at once.
    await store.createStep({ step, thread, ttlMs: TTL, audit: [], fence: holder });
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const { pendingStepId: _resumed, ...resumed } = thread;
    const claim = claimResumeTransition((await store.getStep(step.stepId))!, holder)!;
    expect(await store.commitStepWithThread({ transition: claim, thread: { ...resumed, messages: [{ role: 'user', content: 'resumed' }] }, ttlMs: shortMs })).toBe('committed');
    // Barrier: a thread saved after it, for as short, lapses.
    const other = await lock(`${template.teamId}:${template.channel}:${randomUUID()}`);
    await store.saveThread({ ...newThreadState(step, 1), threadKey: other.threadKey }, shortMs, other);
    await vi.waitFor(async () => expect(await store.getThread(other.threadKey)).toBeUndefined(), { timeout: 5_000, interval: 20 });
    expect({ thread: await store.getThread(holder.threadKey), step: await store.getStep(step.stepId) }).toEqual({ thread: undefined, step: undefined });
  });

  it('stores a step, its thread and its audit records in one write, and round-trips the step', async () => {
    const step = await createStep(makeStep(['apv-1'], { expiresAt: 5_000 }));
    await store.setStepCard(step.stepId, '123.456');
    expect(await store.getStep(step.stepId)).toEqual({ ...step, cardTs: '123.456' });
    expect(await store.getStep('missing')).toBeUndefined();
    expect((await audit.read({ sinceMs: 0 })).some((event) => event.type === 'expired' && event.stepId === step.stepId)).toBe(true);
  });

  it("tells whoever records a card's ts the step's revision, so a decision that came first is shown", async () => {
    const step = await createStep(makeStep(['apv-1', 'apv-2']));
    expect(await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 })).toBeDefined();
    // The card showed revision 0; a decision made meanwhile could not update a card it did not know.
    expect(await store.setStepCard(step.stepId, '4.4', 'https://slack.example/late-card')).toEqual({ revision: step.revision + 1, cardTs: '4.4' });
    expect(await store.getStep(step.stepId)).toMatchObject({ cardTs: '4.4', cardLink: 'https://slack.example/late-card' });
  });

  it("records a step's first card only: a second is told the card on record, and a gone step records none", async () => {
    const step = await createStep(makeStep(['apv-1']));
    expect(await store.setStepCard(step.stepId, '5.1', 'https://slack.example/first-card')).toEqual({ revision: step.revision, cardTs: '5.1' });
    // The same card again (a resend after a lost reply) is still the one on record.
    expect(await store.setStepCard(step.stepId, '5.1', 'https://slack.example/first-card')).toEqual({ revision: step.revision, cardTs: '5.1' });
    // A card another process posted after a stall does not replace it, nor its link.
    expect(await store.setStepCard(step.stepId, '5.2', 'https://slack.example/second-card')).toEqual({ revision: step.revision, cardTs: '5.1' });
    expect(await store.getStep(step.stepId)).toMatchObject({ cardTs: '5.1', cardLink: 'https://slack.example/first-card' });
    expect(await store.setStepCard('missing', '5.3')).toBeUndefined();
    expect(await store.getStep('missing')).toBeUndefined();
  });

  it('replaces the thread card only over the one on record, with its link; a gone step, or another card, is left as it is', async () => {
    const step = await createStep(makeStep(['apv-1']));
    await store.setStepCard(step.stepId, '6.1', 'https://slack.example/old-card');
    expect(await store.replaceStepCard(step.stepId, { from: '6.1', to: '6.2', link: 'https://slack.example/new-card' })).toBe(true);
    expect(await store.getStep(step.stepId)).toMatchObject({ cardTs: '6.2', cardLink: 'https://slack.example/new-card', revision: step.revision });
    // Another process replaced it first: this one's card is not recorded over it.
    expect(await store.replaceStepCard(step.stepId, { from: '6.1', to: '6.3' })).toBe(false);
    expect(await store.getStep(step.stepId)).toMatchObject({ cardTs: '6.2', cardLink: 'https://slack.example/new-card' });
    // The same card again (a resend after a lost reply; another process's card found by a lost post's lookup): on record, so a success.
    expect(await store.replaceStepCard(step.stepId, { from: '6.1', to: '6.2', link: 'https://slack.example/new-card' })).toBe(true);
    expect(await store.getStep(step.stepId)).toMatchObject({ cardTs: '6.2', cardLink: 'https://slack.example/new-card', revision: step.revision });
    // Without a link, the old card's is not left pointing at it.
    expect(await store.replaceStepCard(step.stepId, { from: '6.2', to: '6.4' })).toBe(true);
    expect((await store.getStep(step.stepId))?.cardLink).toBeUndefined();
    expect(await store.replaceStepCard('missing', { from: '6.1', to: '6.5' })).toBe(false);
    expect(await store.getStep('missing')).toBeUndefined();
  });

  it('records copies of a card outside the revision, the first one per channel: a decision keeps them, a gone step gets none', async () => {
    const step = await createStep(makeStep(['apv-1']));
    await store.setStepCard(step.stepId, '1.1', 'https://slack.example/thread-card');
    const dm = { kind: 'dm' as const, channel: 'D0BOB', ts: '3.3', userId: 'UBOB' };
    const approvals = { kind: 'channel' as const, channel: 'C0APPROVALS', ts: '2.2', permalink: 'https://slack.example/copy' };
    expect(await store.recordCardCopy(step.stepId, dm)).toEqual(dm);
    expect(await store.recordCardCopy(step.stepId, approvals)).toEqual(approvals);
    // Another process's copy in the same channel (both read the step without one), recorded second: not recorded over it.
    expect(await store.recordCardCopy(step.stepId, { ...approvals, ts: '2.1' })).toEqual(approvals);
    // The same copy again (a resend after a lost reply): on record.
    expect(await store.recordCardCopy(step.stepId, approvals)).toEqual(approvals);
    expect(await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 })).toBeDefined();
    const stored = await store.getStep(step.stepId);
    expect(stored).toMatchObject({ cardTs: '1.1', cardLink: 'https://slack.example/thread-card', copies: [approvals, dm], revision: 1 });
    expect(await store.recordCardCopy('missing', dm)).toBeUndefined();
    expect(await store.getStep('missing')).toBeUndefined();
  });

  it('writes a transition only over the revision it was computed from, with its audit records', async () => {
    const step = await createStep(makeStep(['apv-1']));
    const first = applyCallAction(step, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UBOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now: 2, groupMembers: new Map(), newGrantId: randomUUID });
    const second = applyCallAction(step, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UCAROL', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'deny' } }, { now: 2, groupMembers: new Map(), newGrantId: randomUUID });
    if (!first.ok || !second.ok) throw new Error('both actions are allowed on the step as read');
    expect(await store.commitStep(first.transition)).toEqual({ result: 'committed' });
    expect(await store.commitStep(second.transition)).toEqual({ result: 'conflict' });
    expect(await store.commitStep({ ...second.transition, step: { ...second.transition.step, stepId: newStepId(step.threadKey) } })).toEqual({ result: 'not-found' });
    expect((await store.getStep(step.stepId))?.decisions['apv-1']).toMatchObject({ outcome: 'approved', userId: 'UBOB' });
    const decisions = (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision' && event.stepId === step.stepId);
    expect(decisions.map((event) => (event.type === 'decision' ? event.userId : ''))).toEqual(['UBOB']);
  });

  it('records exactly one of many concurrent clicks on one call', async () => {
    const step = await createStep(makeStep(['apv-1']));
    const results = await Promise.all(Array.from({ length: 25 }, (_, index) => act(step.stepId, `U${index}`, { kind: 'approve', version: 0 })));
    expect(results.filter(Boolean)).toHaveLength(1);
    const stored = await store.getStep(step.stepId);
    expect(stored?.phase).toBe('complete');
    expect(stored?.revision).toBe(1);
  });

  it('lets two approvers racing for a quorum of two complete it exactly once, each counted once', async () => {
    const step = await createStep(makeStep([{ approvalId: 'apv-1', policy: evaluation({ required: 2 }) }]));
    await Promise.all(['UBOB', 'UCAROL', 'UBOB', 'UCAROL'].map((user) => act(step.stepId, user, { kind: 'approve', version: 0 })));
    const stored = await store.getStep(step.stepId);
    expect(stored?.decisions['apv-1']).toMatchObject({ outcome: 'approved' });
    expect(new Set(stored?.decisions['apv-1']?.approvedBy)).toEqual(new Set(['UBOB', 'UCAROL']));
    expect(stored?.approvals?.['apv-1']).toHaveLength(2);
  });

  it('completes a step once when its calls are decided concurrently, and indexes it until the resume is claimed', async () => {
    const ids = ['a', 'b', 'c', 'd'];
    const step = await createStep(makeStep(ids));
    await Promise.all(
      ids.map((approvalId) =>
        commitTransition(store, step.stepId, (current) => {
          const result = applyCallAction(current, { stepId: step.stepId, approvalId, userId: 'UBOB', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now: 2, groupMembers: new Map(), newGrantId: randomUUID });
          return result.ok ? result.transition : undefined;
        }),
      ),
    );
    const stored = await store.getStep(step.stepId);
    expect(stored?.phase).toBe('complete');
    expect(stored?.revision).toBe(4);
    expect(await store.completedSteps({ before: Date.now() + 60_000, limit: 1000 })).toContain(step.stepId);
  });

  it('lets one holder claim the resume, and a newer holder of the thread take it over, never an older one', async () => {
    const step = await createStep(makeStep(['apv-1']));
    const older = await lock(step.threadKey, 30);
    expect(await commitTransition(store, step.stepId, (current) => claimResumeTransition(current, older))).toBeUndefined();
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const claims = await Promise.all([1, 2, 3].map(() => commitTransition(store, step.stepId, (current) => claimResumeTransition(current, older))));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.completedSteps({ before: Date.now() + 60_000, limit: 1000 })).not.toContain(step.stepId);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const newer = await lock(step.threadKey);
    expect(Number(newer.token)).toBeGreaterThan(Number(older.token));
    expect((await commitTransition(store, step.stepId, (current) => claimResumeTransition(current, newer)))?.resumedBy).toBe(newer.token);
    await expect(commitTransition(store, step.stepId, (current) => claimResumeTransition(current, older))).rejects.toBeInstanceOf(FencedError);
  });

  it('claims a resume and saves the thread that records it in one write: both, or neither', async () => {
    // A thread of its own: other tests hold locks on the default one.
    const step = await createStep(makeStep(['apv-1'], { threadTs: `1700000${String((threadCounter += 1) % 1000).padStart(3, '0')}.000100` }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const decided = (await store.getStep(step.stepId))!;
    const thread = { ...newThreadState(decided, 1), threadKey: step.threadKey };
    const recorded = (note: string) => ({ ...thread, messages: [{ role: 'user' as const, content: note }] });

    // Fenced: a holder that stalled past its lock writes neither.
    const stale = await lock(step.threadKey, 30);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const holder = await lock(step.threadKey);
    expect(await store.commitStepWithThread({ transition: claimResumeTransition(decided, stale)!, thread: recorded('stale'), ttlMs: TTL })).toBe('fenced');
    // Conflict: computed from a revision the step has moved past.
    const old = { ...decided, revision: decided.revision - 1 };
    expect(await store.commitStepWithThread({ transition: claimResumeTransition(old, holder)!, thread: recorded('conflict'), ttlMs: TTL })).toBe('conflict');
    expect((await store.getStep(step.stepId))?.phase).toBe('complete');
    expect(await store.getThread(step.threadKey)).toBeUndefined();

    expect(await store.commitStepWithThread({ transition: claimResumeTransition(decided, holder)!, thread: recorded('claimed'), ttlMs: TTL })).toBe('committed');
    expect(await store.getStep(step.stepId)).toMatchObject({ phase: 'resumed', resumedBy: holder.token, revision: decided.revision + 1 });
    expect((await store.getThread(step.threadKey))?.messages).toEqual([{ role: 'user', content: 'claimed' }]);
    expect(await store.completedSteps({ before: Date.now() + 60_000, limit: 1000 })).not.toContain(step.stepId);
  });

  it("writes a resume claim's audit records in the claim: none when it is refused", async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: `1700002${String((threadCounter += 1) % 1000).padStart(3, '0')}.000100` }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const decided = (await store.getStep(step.stepId))!;
    const thread = { ...newThreadState(decided, 1), threadKey: step.threadKey, messages: [{ role: 'user' as const, content: 'claimed' }] };
    const revoked = { type: 'action-refused', teamId: step.teamId, stepId: step.stepId, approvalId: 'apv-1', toolName: 'restart_service', userId: 'UBOB', action: 'resume', code: 'approval-revoked', reason: 'no longer holds' } as const;
    const refusals = async () => (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'action-refused' && event.stepId === step.stepId);
    const claim = (fence: Fence, from = decided) => ({ ...claimResumeTransition(from, fence)!, audit: [revoked] });

    const stale = await lock(step.threadKey, 30);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const holder = await lock(step.threadKey);
    expect(await store.commitStepWithThread({ transition: claim(stale), thread, ttlMs: TTL })).toBe('fenced');
    expect(await store.commitStepWithThread({ transition: claim(holder, { ...decided, revision: decided.revision - 1 }), thread, ttlMs: TTL })).toBe('conflict');
    expect(await refusals()).toEqual([]);

    expect(await store.commitStepWithThread({ transition: claim(holder), thread, ttlMs: TTL })).toBe('committed');
    expect(await refusals()).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked', action: 'resume' })]);
    expect((await store.getThread(step.threadKey))?.messages).toEqual(thread.messages);
  });

  it('closes a decided step whose thread lost its saved state, with its records and the fresh thread in one write: it is no longer offered for resuming', async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: `1700004${String((threadCounter += 1) % 1000).padStart(3, '0')}.000100` }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const decided = (await store.getStep(step.stepId))!;
    const holder = await lock(step.threadKey);
    const lost = { outcome: 'denied' as const, userId: 'countersign', at: 3, reason: "the thread's saved state was lost" };
    const transition = closeLostThreadTransition(decided, { fence: holder, decision: lost })!;
    const thread = { ...newThreadState(decided, 1), threadKey: step.threadKey, unpostedStopNotice: 'lost' };
    expect(await store.commitStepWithThread({ transition, thread, ttlMs: TTL, settled: true })).toBe('committed');
    expect(await store.getStep(step.stepId)).toMatchObject({ phase: 'resumed', resumedBy: holder.token, decisions: { 'apv-1': { outcome: 'denied', userId: 'countersign' } } });
    expect(await store.completedSteps({ before: Date.now() + 60_000, limit: 1000 })).not.toContain(step.stepId);
    expect((await store.getThread(step.threadKey))?.unpostedStopNotice).toBe('lost');
    const closings = (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision' && event.stepId === step.stepId && event.userId === 'countersign');
    expect(closings).toEqual([expect.objectContaining({ outcome: 'denied', reason: expect.stringContaining("the thread's saved state was lost") })]);
  });

  it("writes an interrupted resume's re-judged decisions with the thread that tells the model, under the recovering holder's fence: both, or neither", async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: `1700003${String((threadCounter += 1) % 1000).padStart(3, '0')}.000100` }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const stopped = await lock(step.threadKey, 30);
    const thread = { ...newThreadState(step, 1), threadKey: step.threadKey };
    expect(await store.commitStepWithThread({ transition: claimResumeTransition((await store.getStep(step.stepId))!, stopped)!, thread: { ...thread, messages: [{ role: 'user', content: 'claimed' }] }, ttlMs: TTL })).toBe('committed');
    const claimed = (await store.getStep(step.stepId))!;
    const revoked = { type: 'action-refused', teamId: step.teamId, stepId: step.stepId, approvalId: 'apv-1', toolName: 'restart_service', userId: 'UBOB', action: 'resume', code: 'approval-revoked', reason: 'fewer approvals than the rule requires' } as const;
    const refusals = async () => (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'action-refused' && event.stepId === step.stepId);
    const closing = { outcome: 'denied' as const, userId: 'countersign', at: 3, reason: 'it has fewer approvals than the rule requires' };
    const rejudged = (fence: Fence) => ({ ...rejudgeResumeTransition(claimed, { fence, decisions: { 'apv-1': closing } })!, audit: [revoked] });
    const told = { ...thread, messages: [{ role: 'user' as const, content: 'not run' }] };

    await new Promise((resolve) => setTimeout(resolve, 60));
    const recovering = await lock(step.threadKey);
    // The stopped holder, woken, is fenced out of it.
    expect(await store.commitStepWithThread({ transition: rejudged(stopped), thread: told, ttlMs: TTL })).toBe('fenced');
    expect({ step: await store.getStep(step.stepId), refusals: await refusals() }).toEqual({ step: claimed, refusals: [] });

    expect(await store.commitStepWithThread({ transition: rejudged(recovering), thread: told, ttlMs: TTL })).toBe('committed');
    expect(await store.getStep(step.stepId)).toMatchObject({ phase: 'resumed', resumedBy: recovering.token, revision: claimed.revision + 1, decisions: { 'apv-1': closing } });
    expect((await store.getThread(step.threadKey))?.messages).toEqual(told.messages);
    expect(await refusals()).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked', action: 'resume' })]);
  });

  it('saves a thread with the audit records of what it withdraws: none when fenced', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const stale = await lock(threadKey, 30);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const holder = await lock(threadKey);
    const stepId = randomUUID();
    const withdrawn = { type: 'action-refused', teamId: 'T1', stepId, approvalId: 'apv-1', toolName: 'restart_service', userId: 'UBOB', action: 'retry', code: 'approval-revoked', reason: 'no longer holds' } as const;
    const refusals = async () => (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'action-refused' && event.stepId === stepId);
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey, messages: [{ role: 'user' as const, content: 'withdrawn' }] };

    await expect(store.saveThread(thread, TTL, stale, { audit: [withdrawn] })).rejects.toBeInstanceOf(FencedError);
    expect(await refusals()).toEqual([]);
    await store.saveThread(thread, TTL, holder, { audit: [withdrawn] });
    expect(await refusals()).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked', action: 'retry' })]);
    expect((await store.getThread(threadKey))?.messages).toEqual(thread.messages);
  });

  // A Slack-shaped ts no other test in the file shares: two tests drawing the same thread would see
  // each other's locks (a thousand random values collided about once in a hundred runs).
  const uniqueTs = () => `1700001${String((threadCounter += 1) % 1000).padStart(3, '0')}.${randomUUID().replace(/\D/g, '').padEnd(6, '0').slice(0, 6)}`;
  const approve = async (stepId: string, approvalId: string) => {
    const current = (await store.getStep(stepId))!;
    const result = applyCallAction(current, { stepId, approvalId, userId: 'UBOB', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now: Date.now(), groupMembers: new Map(), newGrantId: randomUUID });
    if (!result.ok) throw new Error(result.refusal.message);
    return result.transition;
  };

  it('queues the resume in the write of the decision that completes a step, and only then', async () => {
    const unique = uniqueTs;
    const step = await createStep(makeStep(['apv-1', 'apv-2'], { threadTs: unique() }));
    const drain = { item: 'resume-1', lockTtlMs: TTL, mode: 'drain' as const };

    expect(await store.commitStepAndQueue(await approve(step.stepId, 'apv-1'), drain)).toEqual({ result: 'committed' });
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(step.threadKey);
    const completing = await approve(step.stepId, 'apv-2');
    expect(completing.completed).toBe(true);
    // Judged on a revision the step has left: nothing written, nothing queued.
    expect(await store.commitStepAndQueue({ ...completing, fromRevision: completing.fromRevision - 1 }, drain)).toEqual({ result: 'conflict' });
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(step.threadKey);

    const done = await store.commitStepAndQueue(completing, drain);
    expect(done).toEqual({ result: 'committed', claim: { token: expect.any(String), item: 'resume-1' } });
    expect((await store.getStep(step.stepId))?.phase).toBe('complete');
    const fence = { threadKey: step.threadKey, token: done.claim!.token };
    expect(await store.fenceState(fence)).toBe('current');
    expect(await store.finishWork(fence, 'resume-1', TTL)).toBeUndefined();

    // A process that only receives offers the thread to the workers instead.
    const other = await createStep(makeStep(['apv-1'], { threadTs: unique() }));
    const waiting = store.nextReadyThreads({ timeoutMs: 5_000, max: 1 });
    expect(await store.commitStepAndQueue(await approve(other.stepId, 'apv-1'), { item: 'resume-2', lockTtlMs: TTL, mode: 'hand-off' })).toEqual({ result: 'committed' });
    expect(await waiting).toEqual([other.threadKey]);
    expect((await store.lockAndTake(other.threadKey, TTL))?.item).toBe('resume-2');
  });

  it("refuses a person's action at or past its deadline by the store's clock (Redis's TIME), whatever the clock that judged it said", async () => {
    const approveAt = (step: PendingStep, now: number) => {
      const result = applyCallAction(step, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UBOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now, groupMembers: new Map(), newGrantId: randomUUID });
      if (!result.ok) throw new Error(result.refusal.message);
      return result.transition;
    };
    // Due a second ago by the store's clock; the replica that judged the click runs ten minutes behind.
    const lapsed = await createStep(makeStep(['apv-1'], { threadTs: uniqueTs(), expiresAt: Date.now() - 1_000 }));
    const late = approveAt(lapsed, lapsed.expiresAt! - 10 * 60_000);
    expect(late.deadline).toBe(lapsed.expiresAt);
    expect(await store.commitStep(late)).toEqual({ result: 'expired' });
    expect(await store.commitStepAndQueue(late, { item: 'resume-late', lockTtlMs: TTL, mode: 'drain' })).toEqual({ result: 'expired' });
    // Nothing written, queued or audited.
    expect(await store.getStep(lapsed.stepId)).toEqual(lapsed);
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(lapsed.threadKey);
    expect((await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision' && event.stepId === lapsed.stepId)).toEqual([]);

    // A minute ahead by the store's clock: written.
    const open = await createStep(makeStep(['apv-1'], { threadTs: uniqueTs(), expiresAt: Date.now() + 60_000 }));
    expect(await store.commitStep(approveAt(open, Date.now()))).toEqual({ result: 'committed' });
    expect((await store.getStep(open.stepId))?.phase).toBe('complete');
  });

  it('takes a completing decision sent again after its reply was lost as its own: the same claim, nothing queued twice', async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: uniqueTs() }));
    const completing = await approve(step.stepId, 'apv-1');
    const click = { item: 'resume-1', lockTtlMs: TTL, mode: 'drain' as const, attempt: `click-${randomUUID()}` };
    const first = await store.commitStepAndQueue(completing, click);
    expect(first).toEqual({ result: 'committed', claim: { token: expect.any(String), item: 'resume-1' } });
    // ioredis resends what it never heard back about: the same write finds its own commit and lock.
    expect(await store.commitStepAndQueue(completing, click)).toEqual(first);
    // Another click judged on the same revision is another write: a conflict, as before.
    expect(await store.commitStepAndQueue(completing, { ...click, attempt: `click-${randomUUID()}` })).toEqual({ result: 'conflict' });
    const fence = { threadKey: step.threadKey, token: first.claim!.token };
    expect(await store.finishWork(fence, 'resume-1', TTL)).toBeUndefined();
    // Once its lock is let go, a late resend has nothing to claim (and queues nothing).
    expect(await store.commitStepAndQueue(completing, click)).toEqual({ result: 'committed' });
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(step.threadKey);
  });

  it("gives a completing decision that takes a dead holder's lapsed lock that holder's item first, said to be left over", async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: uniqueTs() }));
    expect(await store.enqueueWork(step.threadKey, 'left-behind', 40)).toEqual({ token: expect.any(String), item: 'left-behind' });
    // The holder dies with its item in flight; its lock lapses.
    await new Promise((resolve) => setTimeout(resolve, 80));
    const click = { item: 'resume-1', lockTtlMs: TTL, mode: 'drain' as const, attempt: `click-${randomUUID()}` };
    const completing = await approve(step.stepId, 'apv-1');
    const done = await store.commitStepAndQueue(completing, click);
    expect(done).toEqual({ result: 'committed', claim: { token: expect.any(String), item: 'left-behind', leftover: true } });
    // Sent again after a lost reply: answered the same.
    expect(await store.commitStepAndQueue(completing, click)).toEqual(done);
    const fence = { threadKey: step.threadKey, token: done.claim!.token };
    expect(await store.finishWork(fence, 'left-behind', TTL)).toBe('resume-1');
    expect(await store.finishWork(fence, 'resume-1', TTL)).toBeUndefined();
  });

  it('takes a decision that does not complete the step, sent again after its reply was lost, as its own: committed, written and audited once', async () => {
    const step = await createStep(makeStep(['apv-1', 'apv-2', 'apv-3'], { threadTs: uniqueTs() }));
    const first = await approve(step.stepId, 'apv-1');
    expect(first.completed).toBeFalsy();
    const click = { attempt: `click-${randomUUID()}` };
    expect(await store.commitStep(first, click)).toEqual({ result: 'committed' });
    // ioredis resends what it never heard back about: the step is at the next revision, by this very write.
    expect(await store.commitStep(first, click)).toEqual({ result: 'committed' });
    // Another click judged on the same revision is another write: a conflict, as before.
    expect(await store.commitStep(first, { attempt: `click-${randomUUID()}` })).toEqual({ result: 'conflict' });
    expect(await store.getStep(step.stepId)).toMatchObject({ revision: 1, decisions: { 'apv-1': { outcome: 'approved', userId: 'UBOB' } } });

    // A Deny that leaves a call open withdraws authority (in a Cluster, through the connection that waits for replicas): the same.
    const current = (await store.getStep(step.stepId))!;
    const denial = applyCallAction(current, { stepId: step.stepId, approvalId: 'apv-2', userId: 'UCAROL', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action: { kind: 'deny' } }, { now: Date.now(), groupMembers: new Map(), newGrantId: randomUUID });
    if (!denial.ok) throw new Error(denial.refusal.message);
    expect(denial.transition).toMatchObject({ withdraws: true });
    expect(denial.transition.completed).toBeFalsy();
    const deny = { attempt: `deny-${randomUUID()}` };
    expect(await store.commitStep(denial.transition, deny)).toEqual({ result: 'committed' });
    expect(await store.commitStep(denial.transition, deny)).toEqual({ result: 'committed' });
    expect(await store.getStep(step.stepId)).toMatchObject({ revision: 2, decisions: { 'apv-2': { outcome: 'denied', userId: 'UCAROL' } } });
    const decisions = (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision' && event.stepId === step.stepId);
    expect(decisions.map((event) => (event.type === 'decision' ? event.outcome : ''))).toEqual(['approved', 'denied']);
  });

  it('takes an enqueue sent again after its reply was lost as its own: the same claim, the item queued once', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const first = { attempt: `enqueue-${randomUUID()}` };
    const claim = await store.enqueueWork(threadKey, 'one', TTL, first);
    expect(claim).toEqual({ token: expect.any(String), item: 'one' });
    expect(await store.enqueueWork(threadKey, 'one', TTL, first)).toEqual(claim);
    const second = { attempt: `enqueue-${randomUUID()}` };
    expect(await store.enqueueWork(threadKey, 'two', TTL, second)).toBeUndefined();
    expect(await store.enqueueWork(threadKey, 'two', TTL, second)).toBeUndefined();
    const fence = { threadKey, token: claim!.token };
    expect(await store.finishWork(fence, 'one', TTL)).toBe('two');
    expect(await store.finishWork(fence, 'two', TTL)).toBeUndefined();
  });

  it('takes a hand-off sent again after its reply was lost as its own: the item queued once', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    // Held, so no hint is left on the shared ready list for the other cases' waits.
    const worker = await lock(threadKey);
    const first = { attempt: `hand-off-${randomUUID()}` };
    await store.handOffWork(threadKey, 'one', first);
    // ioredis resends what it never heard back about: the same write finds its own attempt.
    await store.handOffWork(threadKey, 'one', first);
    await store.handOffWork(threadKey, 'two', { attempt: `hand-off-${randomUUID()}` });
    expect(await store.takeWork(worker)).toBe('one');
    expect(await store.finishWork(worker, 'one', TTL)).toBe('two');
    expect(await store.finishWork(worker, 'two', TTL)).toBeUndefined();
  });

  it('writes a Deny that completes a step with its resume, as an approval is (in a Cluster on the connection that waits for replicas, none here)', async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: uniqueTs() }));
    const current = (await store.getStep(step.stepId))!;
    const denial = applyCallAction(current, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UCAROL', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action: { kind: 'deny' } }, { now: Date.now(), groupMembers: new Map(), newGrantId: randomUUID });
    if (!denial.ok) throw new Error(denial.refusal.message);
    expect(denial.transition).toMatchObject({ completed: true, withdraws: true });
    const drain = { item: 'resume-denied', lockTtlMs: TTL, mode: 'drain' as const, attempt: `deny-${randomUUID()}` };
    expect(await store.commitStepAndQueue({ ...denial.transition, fromRevision: denial.transition.fromRevision + 1 }, drain)).toEqual({ result: 'conflict' });
    const done = await store.commitStepAndQueue(denial.transition, drain);
    // No replica to wait for, so nothing unconfirmed.
    expect(done).toEqual({ result: 'committed', claim: { token: expect.any(String), item: 'resume-denied' } });
    // Sent again after its reply was lost, the Deny finds its own commit and claim, as an approval does.
    expect(await store.commitStepAndQueue(denial.transition, drain)).toEqual(done);
    expect((await store.getStep(step.stepId))?.decisions['apv-1']).toMatchObject({ outcome: 'denied', userId: 'UCAROL' });
    expect(await store.finishWork({ threadKey: step.threadKey, token: done.claim!.token }, 'resume-denied', TTL)).toBeUndefined();
    const decisions = (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision' && event.stepId === step.stepId);
    expect(decisions.map((event) => (event.type === 'decision' ? event.outcome : ''))).toEqual(['denied']);
  });

  it("reads a resume's step and thread with a worker's pick-up lock where the store can (the resume's first round trip)", async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: uniqueTs() }));
    const holder = await lock(step.threadKey);
    await store.saveThread({ ...newThreadState(step, 1), threadKey: step.threadKey, pendingStepId: step.stepId, messages: [{ role: 'user', content: 'restart the worker' }] }, TTL, holder);
    expect(await store.releaseLockIfIdle(holder, TTL)).toBe('released');
    const resumeItem = JSON.stringify({ kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs, id: randomUUID() });
    await store.commitStepAndQueue(await approve(step.stepId, 'apv-1'), { item: resumeItem, lockTtlMs: TTL, mode: 'hand-off' });
    expect(await store.nextReadyThreads({ timeoutMs: 5_000, max: 1 })).toEqual([step.threadKey]);

    const claim = await store.lockAndTake(step.threadKey, TTL);
    expect(claim?.item).toBe(resumeItem);
    // The memory store has no round trips to spare; Redis reads both in the pick-up's script.
    if (name === 'memory') expect(claim?.read).toBeUndefined();
    else {
      expect(claim?.read).toEqual({ stepId: step.stepId, step: await store.getStep(step.stepId), thread: await store.getThread(step.threadKey) });
      expect(claim?.read?.step?.phase).toBe('complete');
      expect(claim?.read?.thread?.messages).toEqual([{ role: 'user', content: 'restart the worker' }]);
    }

    // Any other item is read by whoever handles it.
    const messageThread = `${step.teamId}:${step.channel}:${uniqueTs()}`;
    const messageItem = JSON.stringify({ kind: 'message', stepId: step.stepId, text: 'hi' });
    await store.handOffWork(messageThread, messageItem);
    expect(await store.nextReadyThreads({ timeoutMs: 5_000, max: 1 })).toEqual([messageThread]);
    expect(await store.lockAndTake(messageThread, TTL)).toEqual({ token: expect.any(String), item: messageItem });
  });

  it('supersedes only undecided calls, and only while pending', async () => {
    const step = await createStep(makeStep(['apv-1', 'apv-2']));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const superseded = await commitTransition(store, step.stepId, (current) => supersedeTransition(current, { userId: 'UALICE', now: 3 }));
    expect(superseded?.phase).toBe('superseded');
    expect(superseded?.decisions['apv-1']?.outcome).toBe('approved');
    expect(superseded?.decisions['apv-2']?.outcome).toBe('superseded');
    expect(await commitTransition(store, step.stepId, (current) => supersedeTransition(current, { userId: 'UALICE', now: 3 }))).toBeUndefined();
  });

  it('fences out a holder whose lock lapsed once another process took the thread', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const stalled = { threadKey, token: (await store.enqueueWork(threadKey, 'one', 30))!.token };
    expect(await store.takeWork(stalled)).toBe('one');
    await new Promise((resolve) => setTimeout(resolve, 60));
    const fresh = await lock(threadKey);
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey };
    await expect(store.saveThread(thread, TTL, stalled)).rejects.toBeInstanceOf(FencedError);
    await expect(store.markExecuting({ fence: stalled, toolCallId: 'c1', marker: { toolName: 't', input: {}, startedAt: 1 }, ttlMs: TTL, audit: [] })).rejects.toBeInstanceOf(FencedError);
    await expect(store.finishWork(stalled, 'one', TTL)).rejects.toBeInstanceOf(FencedError);
    await expect(store.takeWork(stalled)).rejects.toBeInstanceOf(FencedError);
    expect(await store.extendLock(stalled, TTL)).toBe('taken');
    expect(await store.fenceState(stalled)).not.toBe('current');
    expect(await store.fenceState(stalled)).toBe('taken');
    expect(await store.releaseLockIfIdle(stalled, TTL)).toBe('fenced');
    // The new holder finds the stalled one's item still in flight, and owns the thread.
    expect(await store.takeLeftover(threadKey)).toBe('one');
    await store.saveThread(thread, TTL, fresh);
    expect(await store.takeWork(fresh)).toBe('one');
    expect(await store.finishWork(fresh, 'one', TTL)).toBeUndefined();
    expect(await store.tryLock(threadKey, TTL)).toBeDefined();
  });

  it("writes an item's closing save together with its finish, under the same fence, or neither", async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const fence = { threadKey, token: (await store.enqueueWork(threadKey, 'one', TTL))!.token };
    expect(await store.takeWork(fence)).toBe('one');
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey };
    const question = { role: 'user' as const, content: 'is the queue healthy?' };
    await store.saveThread({ ...thread, messages: [question], outbox: 'It is.' }, TTL, fence);
    await store.markExecuting({ fence, toolCallId: 'c1', marker: { toolName: 't', input: {}, startedAt: 1 }, ttlMs: TTL, audit: [] });
    const answered = { ...thread, messages: [question, { role: 'assistant' as const, content: 'It is.' }] };
    expect(await store.finishWork(fence, 'one', TTL, { thread: answered, ttlMs: TTL, settled: true })).toBeUndefined();
    const saved = await store.getThread(threadKey);
    expect(saved?.messages).toEqual(answered.messages);
    expect(saved?.outbox).toBeUndefined();
    expect(await store.executingCalls(threadKey)).toEqual(new Map());
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(threadKey);

    // A holder that stalled past its lock: its closing save is refused with its finish.
    const stalled = { threadKey, token: (await store.enqueueWork(threadKey, 'two', 30))!.token };
    expect(await store.takeWork(stalled)).toBe('two');
    await new Promise((resolve) => setTimeout(resolve, 60));
    await lock(threadKey);
    await expect(store.finishWork(stalled, 'two', TTL, { thread: { ...answered, outbox: 'a late answer' }, ttlMs: TTL })).rejects.toBeInstanceOf(FencedError);
    expect((await store.getThread(threadKey))?.outbox).toBeUndefined();
    expect(await store.takeLeftover(threadKey)).toBe('two');
  });

  it('answers a named closing save and finish sent again after they ran as written, once another process holds the thread: only a finish never written is fenced', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const first = { threadKey, token: (await store.enqueueWork(threadKey, 'one', TTL))!.token };
    expect(await store.takeWork(first)).toBe('one');
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey };
    const answered = { ...thread, messages: [{ role: 'user' as const, content: 'status?' }, { role: 'assistant' as const, content: 'All good.' }] };
    const named = { attempt: `finish-${randomUUID()}` };
    expect(await store.finishWork(first, 'one', TTL, { thread: answered, ttlMs: TTL }, named)).toBeUndefined();
    // The lock let go, a new message takes the thread; its holder saves.
    const next = { threadKey, token: (await store.enqueueWork(threadKey, 'two', TTL))!.token };
    const asked = { ...answered, messages: [...answered.messages, { role: 'user' as const, content: 'and now?' }] };
    await store.saveThread(asked, TTL, next);
    // ioredis sends the first finish again (its reply was lost): written, not fenced, and not run again.
    expect(await store.finishWork(first, 'one', TTL, { thread: answered, ttlMs: TTL }, named)).toBeUndefined();
    expect((await store.getThread(threadKey))?.messages).toEqual(asked.messages);
    expect(await store.fenceState(next)).toBe('current');
    expect(await store.takeLeftover(threadKey)).toBe('two');
    // Another finish of the stalled holder was never written: fenced.
    await expect(store.finishWork(first, 'one', TTL, { thread: answered, ttlMs: TTL }, { attempt: `finish-${randomUUID()}` })).rejects.toBeInstanceOf(FencedError);
    await expect(store.finishWork(first, 'one', TTL, { thread: answered, ttlMs: TTL })).rejects.toBeInstanceOf(FencedError);
  });

  it('answers a named save sent again after it ran as written, once another process holds the thread, and does not run it again', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const stalled = await lock(threadKey, 30);
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey };
    const shown = { ...thread, messages: [{ role: 'assistant' as const, content: 'All good.' }] };
    const named = { attempt: `save-${randomUUID()}` };
    await store.saveThread(shown, TTL, stalled, named);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const fresh = await lock(threadKey);
    const later = { ...shown, messages: [...shown.messages, { role: 'user' as const, content: 'and now?' }] };
    await store.saveThread(later, TTL, fresh);
    await store.saveThread(shown, TTL, stalled, named);
    expect((await store.getThread(threadKey))?.messages).toEqual(later.messages);
    await expect(store.saveThread(shown, TTL, stalled, { attempt: `save-${randomUUID()}` })).rejects.toBeInstanceOf(FencedError);
    await expect(store.saveThread(shown, TTL, stalled)).rejects.toBeInstanceOf(FencedError);
  });

  it('answers a named step creation sent again after it ran as written, once another process holds the thread, and does not run it again', async () => {
    const template = makeStep(['apv-1'], { remindAt: Date.now() + TTL });
    const threadKey = `${template.threadKey}-${randomUUID()}`;
    const stalled = await lock(threadKey, 30);
    const step = { ...template, threadKey, stepId: newStepId(threadKey) };
    const thread = { ...newThreadState(step, 1), threadKey, pendingStepId: step.stepId, messages: [{ role: 'assistant' as const, content: 'I will restart the worker.' }] };
    const opening = { step, thread, ttlMs: TTL, audit: [], fence: stalled };
    const named = { attempt: `step-${randomUUID()}` };
    await store.createStep({ ...opening, ...named });
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const fresh = await lock(threadKey);
    const later = { ...thread, messages: [...thread.messages, { role: 'user' as const, content: 'and now?' }] };
    await store.saveThread(later, TTL, fresh);
    // ioredis sends the step's write again (its reply was lost): written, not fenced, and not run again.
    await store.createStep({ ...opening, ...named });
    expect((await store.getThread(threadKey))?.messages).toEqual(later.messages);
    expect(await store.getStep(step.stepId)).toMatchObject({ revision: 1, phase: 'complete' });
    // Another write of the stalled holder was never written: fenced.
    await expect(store.createStep({ ...opening, attempt: `step-${randomUUID()}` })).rejects.toBeInstanceOf(FencedError);
    await expect(store.createStep(opening)).rejects.toBeInstanceOf(FencedError);
  });

  it('answers a named resume claim sent again after it ran as committed, not as a conflict with itself or fenced', async () => {
    const step = await createStep(makeStep(['apv-1'], { threadTs: `1700004${String((threadCounter += 1) % 1000).padStart(3, '0')}.000100` }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const decided = (await store.getStep(step.stepId))!;
    const thread = { ...newThreadState(decided, 1), threadKey: step.threadKey, messages: [{ role: 'user' as const, content: 'claimed' }] };
    const holder = await lock(step.threadKey, 30);
    const named = { attempt: `claim-${randomUUID()}` };
    const claim = { transition: claimResumeTransition(decided, holder)!, thread, ttlMs: TTL, ...named };
    expect(await store.commitStepWithThread(claim)).toBe('committed');
    expect(await store.commitStepWithThread(claim)).toBe('committed');
    await new Promise((resolve) => setTimeout(resolve, 60));
    await lock(step.threadKey);
    expect(await store.commitStepWithThread(claim)).toBe('committed');
    expect(await store.getStep(step.stepId)).toMatchObject({ phase: 'resumed', resumedBy: holder.token, revision: decided.revision + 1 });
    expect(await store.commitStepWithThread({ ...claim, attempt: `claim-${randomUUID()}` })).toBe('fenced');
  });

  it('lets a holder whose lock lapsed carry on when nobody took the thread meanwhile', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const fence = await lock(threadKey, 30);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await store.extendLock(fence, TTL)).toBe('current');
    expect(await store.fenceState(fence)).toBe('current');
    expect(await store.tryLock(threadKey, TTL)).toBeUndefined();
  });

  it('tells a token the store lost (no token at all) from one another holder replaced, and issues no token for it', async () => {
    // What a holder finds after Redis came back without its data: the thread has no token.
    const threadKey = `T1:C1:${randomUUID()}`;
    const orphan = { threadKey, token: '7.lost' };
    expect(await store.extendLock(orphan, TTL)).toBe('missing');
    expect(await store.fenceState(orphan)).toBe('missing');
    expect(await store.fenceState(orphan)).not.toBe('current');
    // Nothing was written for it: its writes stay refused, and the next message takes the thread.
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey };
    await expect(store.saveThread(thread, TTL, orphan)).rejects.toBeInstanceOf(FencedError);
    const fresh = await lock(threadKey);
    expect(fresh.token).toBeDefined();
    // Once it has, the old holder is fenced as any other.
    expect(await store.extendLock(orphan, TTL)).toBe('taken');
    expect(await store.fenceState(orphan)).toBe('taken');
    await expect(store.saveThread(thread, TTL, orphan)).rejects.toBeInstanceOf(FencedError);
    await store.saveThread(thread, TTL, fresh);
  });

  it('reads a step and a thread together as each reads alone', async () => {
    const step = await createStep(makeStep(['apv-1']));
    const threadKey = `T1:C1:${randomUUID()}`;
    const fence = await lock(threadKey);
    await store.saveThread({ ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey, messages: [{ role: 'user', content: 'restart it' }] }, TTL, fence);
    const both = await store.getStepAndThread(step.stepId, threadKey);
    expect(both.step).toEqual(await store.getStep(step.stepId));
    expect(both.step?.stepId).toBe(step.stepId);
    expect(both.thread).toEqual(await store.getThread(threadKey));
    expect(both.thread?.messages).toEqual([{ role: 'user', content: 'restart it' }]);
    expect(await store.getStepAndThread('no-such-step', `T1:C1:${randomUUID()}`)).toEqual({ step: undefined, thread: undefined });
  });

  it('hands the thread lock to one enqueuer and never strands queued work', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const claim = await store.enqueueWork(threadKey, 'one', TTL);
    // The enqueuer that took the lock took its item too: in flight, as takeWork returns it.
    expect(claim?.item).toBe('one');
    const fence = { threadKey, token: claim!.token };
    expect(await store.enqueueWork(threadKey, 'two', TTL)).toBeUndefined();
    expect(await store.takeWork(fence)).toBe('one');
    // Taken again before it is finished (a reply that was lost): the same item, not the next.
    expect(await store.takeWork(fence)).toBe('one');
    expect(await store.releaseLockIfIdle(fence, TTL)).toBe('more');
    // Finishing takes the next item in the same step; sent twice, it does not skip one.
    expect(await store.finishWork(fence, 'one', TTL)).toBe('two');
    expect(await store.finishWork(fence, 'one', TTL)).toBe('two');
    expect(await store.enqueueWork(threadKey, 'three', TTL)).toBeUndefined();
    expect(await store.finishWork(fence, 'two', TTL)).toBe('three');
    // The last one releases the lock and takes the thread off the list of busy ones.
    expect(await store.finishWork(fence, 'three', TTL)).toBeUndefined();
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(threadKey);
    expect(await store.enqueueWork(threadKey, 'four', TTL)).toBeDefined();
  });

  it('hands work off without locking: a free thread is offered to one worker, a held one is left to its holder', async () => {
    const free = `T1:C1:${randomUUID()}`;
    const held = `T1:C1:${randomUUID()}`;
    const holder = { threadKey: held, token: (await store.tryLock(held, TTL))! };
    const waiting = store.nextReadyThreads({ timeoutMs: 5_000, max: 1 });
    await store.handOffWork(free, 'one');
    await store.handOffWork(held, 'two');
    expect(await waiting).toEqual([free]);
    // Offered once: a second worker waits in vain, and the holder of the other thread drains its item.
    expect(await store.nextReadyThreads({ timeoutMs: 50, max: 5 })).toEqual([]);
    expect(await store.busyThreads({ limit: 1000 })).toEqual(expect.arrayContaining([free, held]));
    expect(await store.takeWork(holder)).toBe('two');
    const worker = { threadKey: free, token: (await store.tryLock(free, TTL))! };
    expect(await store.takeWork(worker)).toBe('one');
  });

  it('ends a wait for handed-off threads at once when its signal is aborted; a thread offered after is the next wait\'s', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const stopping = new AbortController();
    // A wait of an hour: only the abort can end it within the test's timeout.
    const waiting = store.nextReadyThreads({ timeoutMs: 3_600_000, max: 1, signal: stopping.signal });
    stopping.abort();
    expect(await waiting).toEqual([]);
    await store.handOffWork(threadKey, 'one');
    expect(await store.nextReadyThreads({ timeoutMs: 5_000, max: 1 })).toEqual([threadKey]);
  });

  it("hands a stopping holder's thread back: the lock released at once, its work left in place and offered to one worker", async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const claim = await store.enqueueWork(threadKey, 'one', TTL);
    const fence = { threadKey, token: claim!.token };
    // Queued behind the running item (by a live replica, after the holder was told to stop).
    expect(await store.enqueueWork(threadKey, 'two', TTL)).toBeUndefined();
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey };
    const answered = { ...thread, messages: [{ role: 'user' as const, content: 'status?' }, { role: 'assistant' as const, content: 'All good.' }] };
    // The running item finished with its closing save, the next one not taken: 'two' is another worker's.
    expect(await store.finishWork(fence, 'one', TTL, { thread: answered, ttlMs: TTL }, { attempt: `finish-${randomUUID()}`, handBack: true })).toBeUndefined();
    expect((await store.getThread(threadKey))?.messages).toEqual(answered.messages);
    expect(await store.takeLeftover(threadKey)).toBeUndefined();
    expect(await store.busyThreads({ limit: 1000 })).toContain(threadKey);
    expect(await store.nextReadyThreads({ timeoutMs: 5_000, max: 5 })).toEqual([threadKey]);
    const taken = await store.lockAndTake(threadKey, TTL);
    expect(taken).toEqual({ token: expect.any(String), item: 'two' });
    const successor = { threadKey, token: taken!.token };
    // The stopped holder's hand-back, late or sent again, does nothing to its successor's thread.
    await expect(store.finishWork(fence, 'one', TTL, undefined, { handBack: true })).rejects.toBeInstanceOf(FencedError);
    expect(await store.releaseLockIfIdle(fence, TTL, { handBack: true })).toBe('fenced');
    // A holder told to stop with an item taken but not started: it stays in flight, for the next holder first.
    expect(await store.releaseLockIfIdle(successor, TTL, { handBack: true })).toBe('released');
    expect(await store.nextReadyThreads({ timeoutMs: 5_000, max: 5 })).toEqual([threadKey]);
    const last = await store.lockAndTake(threadKey, TTL);
    expect(last?.item).toBe('two');
    // With nothing left, handing back is a plain release: no hint, and off the list of busy threads.
    expect(await store.finishWork({ threadKey, token: last!.token }, 'two', TTL, undefined, { handBack: true })).toBeUndefined();
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(threadKey);
    expect(await store.nextReadyThreads({ timeoutMs: 50, max: 5 })).toEqual([]);
    expect(await store.tryLock(threadKey, TTL)).toBeDefined();
  });

  it('lists a busy thread for the recovery sweep only once its work has waited past the cut-off', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    // Held, so no hint is left on the shared ready list for the other cases' waits.
    await lock(threadKey);
    await store.handOffWork(threadKey, 'item');
    // Just handed off: a worker with room takes it from the ready list; a sweep's grace leaves it there.
    expect(await store.busyThreads({ limit: 1000, before: Date.now() - 60_000 })).not.toContain(threadKey);
    expect(await store.busyThreads({ limit: 1000, before: Date.now() + 60_000 })).toContain(threadKey);
    expect(await store.busyThreads({ limit: 1000 })).toContain(threadKey);
  });

  it('lists for the recovery sweep the oldest threads nobody holds, past any number of older held ones', async () => {
    // A store of its own: threads other tests leave busy must not fill the answer.
    const { store: own, audit: ownAudit } = create();
    try {
      // One channel's threads share a shard, so one index (and one script) on Redis.
      const held = Array.from({ length: 3 }, () => `T1:C1:${randomUUID()}`);
      for (const threadKey of held) {
        await own.tryLock(threadKey, TTL);
        await own.handOffWork(threadKey, 'item');
      }
      // Queued a millisecond later at least, so every held one is older.
      const queuedAt = Date.now();
      while (Date.now() === queuedAt) await new Promise((resolve) => setTimeout(resolve, 1));
      const free = `T1:C1:${randomUUID()}`;
      const elsewhere = `T1:C7:${randomUUID()}`;
      await own.handOffWork(free, 'item');
      expect(await own.stalledThreads({ limit: 1, before: Date.now() + 60_000 })).toEqual([free]);
      // Another shard's too (Redis reads each shard's index and merges them).
      await own.handOffWork(elsewhere, 'item');
      expect((await own.stalledThreads({ limit: 10, before: Date.now() + 60_000 })).sort()).toEqual([free, elsewhere].sort());
      // Work just queued waits out the cut-off (a worker with room takes it from the ready list).
      expect(await own.stalledThreads({ limit: 10, before: queuedAt - 60_000 })).toEqual([]);
      expect((await own.busyThreads({ limit: 10 })).sort()).toEqual([...held, free, elsewhere].sort());
    } finally {
      await own.close();
      await ownAudit.close();
    }
  });

  it('hands a burst of hand-offs to one wait, as many as the worker has room for, each once', async () => {
    // A store of its own: hints other tests leave unclaimed must not count here.
    const { store: own, audit: ownAudit } = create();
    try {
      // One channel's threads share a shard, so one ready list on Redis.
      const burst = [`T1:C1:${randomUUID()}`, `T1:C1:${randomUUID()}`, `T1:C1:${randomUUID()}`, `T1:C1:${randomUUID()}`];
      for (const threadKey of burst) await own.handOffWork(threadKey, 'item');
      const first = await own.nextReadyThreads({ timeoutMs: 5_000, max: 3 });
      expect(first).toHaveLength(3);
      expect([...first, ...(await own.nextReadyThreads({ timeoutMs: 5_000, max: 3 }))].sort()).toEqual([...burst].sort());
      expect(await own.nextReadyThreads({ timeoutMs: 50, max: 3 })).toEqual([]);

      // Spread over shards (Redis takes one shard's list a wait): every hint, each once.
      const spread = [`T1:C3:${randomUUID()}`, `T1:C4:${randomUUID()}`, `T1:C4:${randomUUID()}`, `T1:C5:${randomUUID()}`];
      for (const threadKey of spread) await own.handOffWork(threadKey, 'item');
      const taken = await own.nextReadyThreads({ timeoutMs: 5_000, max: 5 });
      while (taken.length < spread.length) {
        const more = await own.nextReadyThreads({ timeoutMs: 5_000, max: 5 });
        expect(more.length).toBeGreaterThan(0);
        taken.push(...more);
      }
      expect(taken.sort()).toEqual([...spread].sort());
      expect(await own.nextReadyThreads({ timeoutMs: 50, max: 5 })).toEqual([]);
    } finally {
      await own.close();
      await ownAudit.close();
    }
  });

  it('takes back hints a worker had no room to start, at the head of their lists and in their order', async () => {
    // A store of its own: hints other tests leave unclaimed must not count here.
    const { store: own, audit: ownAudit } = create();
    try {
      const [first, second, third] = [`T1:C1:${randomUUID()}`, `T1:C1:${randomUUID()}`, `T1:C1:${randomUUID()}`];
      for (const threadKey of [first, second, third]) await own.handOffWork(threadKey, 'item');
      expect(await own.nextReadyThreads({ timeoutMs: 5_000, max: 3 })).toEqual([first, second, third]);
      await own.returnReadyThreads([second, third]);
      const later = `T1:C1:${randomUUID()}`;
      await own.handOffWork(later, 'item');
      // Ahead of a hint handed off after them: they keep their turn.
      expect(await own.nextReadyThreads({ timeoutMs: 5_000, max: 3 })).toEqual([second, third, later]);

      // Each to its own shard's list (Redis), and each once.
      const spread = [`T1:C3:${randomUUID()}`, `T1:C4:${randomUUID()}`];
      await own.returnReadyThreads(spread);
      const taken = await own.nextReadyThreads({ timeoutMs: 5_000, max: 5 });
      while (taken.length < spread.length) taken.push(...(await own.nextReadyThreads({ timeoutMs: 5_000, max: 5 })));
      expect(taken.sort()).toEqual([...spread].sort());
      expect(await own.nextReadyThreads({ timeoutMs: 50, max: 5 })).toEqual([]);
    } finally {
      await own.close();
      await ownAudit.close();
    }
  });

  it('keeps an item in flight until it is finished, so work a dead holder took is picked up by the next', async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    // Held long enough to be found held three calls later on a loaded machine.
    const claim = await store.enqueueWork(threadKey, 'resume-step', 500);
    expect(await store.busyThreads({ limit: 1000 })).toContain(threadKey);
    expect(await store.takeWork({ threadKey, token: claim!.token })).toBe('resume-step');
    // The holder dies here: no finishWork, no release. Its lock expires.
    expect(await store.tryLock(threadKey, TTL)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 600));
    const next = await lock(threadKey);
    expect(await store.takeLeftover(threadKey)).toBe('resume-step');
    expect(await store.takeWork(next)).toBe('resume-step');
    expect(await store.finishWork(next, 'resume-step', TTL)).toBeUndefined();
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(threadKey);
  });

  it('lets a worker lock a thread and take its first item in one step', async () => {
    const free = `T1:C1:${randomUUID()}`;
    await store.handOffWork(free, 'one');
    await store.handOffWork(free, 'two');
    // Long enough that the next call still finds the lock held on a loaded machine (30 ms was not,
    // once, beside a second suite), short enough to wait out.
    expect(await store.lockAndTake(free, 500)).toEqual({ token: expect.any(String), item: 'one' });
    expect(await store.lockAndTake(free, TTL)).toBeUndefined();
    // That worker dies with 'one' in flight; the next one, once the lock lapsed, gets 'one' again, left over.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const claim = await store.lockAndTake(free, TTL);
    expect(claim).toEqual({ token: expect.any(String), item: 'one', leftover: true });
    const fence = { threadKey: free, token: claim!.token };
    expect(await store.takeWork(fence)).toBe('one');
    expect(await store.finishWork(fence, 'one', TTL)).toBe('two');
    expect(await store.finishWork(fence, 'two', TTL)).toBeUndefined();
    // Nothing queued: the lock, and no item (the caller releases it).
    const empty = await store.lockAndTake(`T1:C1:${randomUUID()}`, TTL);
    expect(empty?.token).toBeDefined();
    expect(empty?.item).toBeUndefined();
  });

  it("gives an enqueuer that takes a dead holder's lapsed lock that holder's item first, then its own", async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    expect(await store.enqueueWork(threadKey, 'left-behind', 40)).toEqual({ token: expect.any(String), item: 'left-behind' });
    // The holder dies with its item in flight; its lock lapses.
    await new Promise((resolve) => setTimeout(resolve, 80));
    const attempt = { attempt: `enqueue-${randomUUID()}` };
    const claim = await store.enqueueWork(threadKey, 'new-message', TTL, attempt);
    // Said to be left over: what its holder did after its last write is the new holder's to show (`Lease.recovered`).
    expect(claim).toEqual({ token: expect.any(String), item: 'left-behind', leftover: true });
    // Sent again after a lost reply: answered the same.
    expect(await store.enqueueWork(threadKey, 'new-message', TTL, attempt)).toEqual(claim);
    const fence = { threadKey, token: claim!.token };
    expect(await store.finishWork(fence, 'left-behind', TTL)).toBe('new-message');
    expect(await store.finishWork(fence, 'new-message', TTL)).toBeUndefined();
  });

  it('expires only pending steps, once, when their time has come', async () => {
    // Ahead of the store's clock, which judges the approval against the deadline.
    const at = Date.now() + 60_000;
    const step = await createStep(makeStep(['apv-1', 'apv-2'], { createdAt: at, expiresAt: at + 1_000, remindAt: at + 500 }));
    await commitTransition(store, step.stepId, (current) => {
      const result = applyCallAction(current, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UBOB', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now: at + 2, groupMembers: new Map(), newGrantId: randomUUID });
      return result.ok ? result.transition : undefined;
    });
    expect(await store.dueSteps({ kind: 'expiry', now: at + 999, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'reminder', now: at + 600, limit: 1000 })).toContain(step.stepId);
    const claims = await Promise.all([1, 2].map(() => store.claimReminder({ stepId: step.stepId, now: at + 600, until: at + 60_600, leaseMs: TTL })));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.dueSteps({ kind: 'expiry', now: at + 1_000, limit: 1000 })).toContain(step.stepId);
    expect(await commitTransition(store, step.stepId, (current) => expireTransition(current, { now: at + 999 }))).toBeUndefined();
    const expired = await Promise.all([1, 2].map(() => commitTransition(store, step.stepId, (current) => expireTransition(current, { now: at + 1_000 }))));
    expect(expired.filter(Boolean)).toHaveLength(1);
    const closed = expired.find(Boolean)!;
    expect(closed.phase).toBe('complete');
    expect(closed.decisions['apv-1']?.outcome).toBe('approved');
    expect(closed.decisions['apv-2']?.outcome).toBe('expired');
    expect(await store.dueSteps({ kind: 'expiry', now: at + 2_000, limit: 1000 })).not.toContain(step.stepId);
    expect((await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'expired' && event.stepId === step.stepId && event.approvalId === 'apv-2')).toHaveLength(1);
  });

  it("keeps a claimed reminder on the schedule, due again at the claim's end, until its sender finishes it", async () => {
    const at = Date.now() + 60_000;
    const step = await createStep(makeStep(['apv-1'], { createdAt: at, expiresAt: at + 100_000, remindAt: at + 500 }));
    const { stepId } = step;
    expect(await store.claimReminder({ stepId, now: at + 499, until: at + 10_499, leaseMs: TTL })).toBeUndefined();
    const first = await store.claimReminder({ stepId, now: at + 600, until: at + 10_600, leaseMs: TTL });
    expect(first).toEqual({ dueAt: at + 500, until: at + 10_600, claimant: expect.any(String) });
    expect(await store.dueSteps({ kind: 'reminder', now: at + 10_599, limit: 1000 })).not.toContain(stepId);
    // Slack failed: its sender lets go of it, and a later sweep claims it and sees it was due before (tried).
    await store.releaseReminder(stepId, first!);
    expect(await store.dueSteps({ kind: 'reminder', now: at + 10_600, limit: 1000 })).toContain(stepId);
    const second = await store.claimReminder({ stepId, now: at + 10_600, until: at + 20_600, leaseMs: TTL });
    expect(second).toEqual({ dueAt: at + 10_600, until: at + 20_600, claimant: expect.any(String) });
    // The first claim's finish, late, leaves the entry and the claim the second one holds.
    await store.finishReminder(stepId, first!);
    expect(await store.dueSteps({ kind: 'reminder', now: at + 20_600, limit: 1000 })).toContain(stepId);
    expect(await store.keepReminder(stepId, second!, TTL)).toBe(true);
    await store.finishReminder(stepId, second!);
    expect(await store.keepReminder(stepId, second!, TTL)).toBe(false);
    expect(await store.dueSteps({ kind: 'reminder', now: at + 1_000_000, limit: 1000 })).not.toContain(stepId);
    expect(await store.claimReminder({ stepId, now: at + 1_000_000, until: at + 1_010_000, leaseMs: TTL })).toBeUndefined();
    await store.unschedule(stepId);
  });

  it("lets nobody else claim a reminder while its sender's lease runs, past the claim's end too, and tells the sender once it ran out", async () => {
    const at = Date.now() + 60_000;
    const step = await createStep(makeStep(['apv-1'], { createdAt: at, expiresAt: at + 100_000, remindAt: at + 500 }));
    const { stepId } = step;
    const first = await store.claimReminder({ stepId, now: at + 600, until: at + 10_600, leaseMs: TTL, claimant: 'sweep-a' });
    expect(first).toEqual({ dueAt: at + 500, until: at + 10_600, claimant: 'sweep-a' });
    // The claim sent again after its reply was lost: the same claim.
    expect(await store.claimReminder({ stepId, now: at + 600, until: at + 10_600, leaseMs: TTL, claimant: 'sweep-a' })).toEqual(first);
    // Due again by the schedule, but its sender is still posting.
    expect(await store.dueSteps({ kind: 'reminder', now: at + 20_000, limit: 1000 })).toContain(stepId);
    expect(await store.claimReminder({ stepId, now: at + 20_000, until: at + 30_000, leaseMs: TTL })).toBeUndefined();
    expect(await store.keepReminder(stepId, first!, TTL)).toBe(true);
    // Its sender keeps it a little longer, then stalls: the lease runs out by the store's clock, and another sweep takes the reminder over.
    expect(await store.keepReminder(stepId, first!, 50)).toBe(true);
    const second = await vi.waitFor(async () => {
      const claim = await store.claimReminder({ stepId, now: at + 20_000, until: at + 30_000, leaseMs: TTL });
      expect(claim).toBeDefined();
      return claim!;
    });
    expect(second).toEqual({ dueAt: at + 10_600, until: at + 30_000, claimant: expect.any(String) });
    expect(await store.keepReminder(stepId, first!, TTL)).toBe(false);
    // The first sender letting go, late, leaves the second one's claim.
    await store.releaseReminder(stepId, first!);
    expect(await store.keepReminder(stepId, second, TTL)).toBe(true);
    expect(await store.claimReminder({ stepId, now: at + 40_000, until: at + 50_000, leaseMs: TTL })).toBeUndefined();
    await store.finishReminder(stepId, second);
    await store.unschedule(stepId);
  });

  it('schedules escalation hops and lets exactly one of several processes make each hop', async () => {
    const ladder = [
      { afterMs: 100, remind: true, addApprovers: [] },
      { afterMs: 200, remind: false, addApprovers: [{ kind: 'group' as const, groupId: 'S0LEADS' }] },
    ];
    const approvers = [{ kind: 'user' as const, userId: 'U0OPS' }];
    const step = await createStep(makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers, escalation: ladder }) }], { expiresAt: step0(ladder) + 10_000, escalation: { ladder, done: 0, nextAt: step0(ladder) } }));
    expect(await store.dueSteps({ kind: 'escalation', now: step.createdAt + 99, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'escalation', now: step.createdAt + 100, limit: 1000 })).toContain(step.stepId);
    const hop = (now: number) => commitTransition(store, step.stepId, (current) => escalateTransition(current, { now })?.transition);
    expect((await Promise.all([1, 2, 3].map(() => hop(step.createdAt + 150)))).filter(Boolean)).toHaveLength(1);
    const hops = (await Promise.all([1, 2, 3].map(() => hop(step.createdAt + 250)))).filter(Boolean);
    expect(hops).toHaveLength(1);
    expect(hops[0]?.escalation).toMatchObject({ done: 2 });
    expect(hops[0]?.escalation?.nextAt).toBeUndefined();
    expect(hops[0]?.calls[0]?.versions?.at(-1)?.policy.approvers).toEqual([...approvers, { kind: 'group', groupId: 'S0LEADS' }]);
    const events = (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'escalated' && event.stepId === step.stepId);
    expect(events.map((event) => (event.type === 'escalated' ? event.hop : 0))).toEqual([1, 2]);
    await store.scheduleEscalation(step.stepId, undefined);
    expect(await store.dueSteps({ kind: 'escalation', now: step.createdAt + 10_000, limit: 1000 })).not.toContain(step.stepId);
    await store.scheduleEscalation(step.stepId, 5);
    await store.unschedule(step.stepId);
    expect(await store.dueSteps({ kind: 'escalation', now: step.createdAt + 10_000, limit: 1000 })).not.toContain(step.stepId);
  });

  it('stops a ladder none of whose calls waits, once, without an escalated event', async () => {
    const ladder = [{ afterMs: 100, remind: true, addApprovers: [] }];
    // The ladder's call is decided; the other one waits under another rule, which the ladder does not reach.
    const calls = [
      { approvalId: 'apv-1', policy: evaluation({ escalation: ladder }) },
      { approvalId: 'apv-2', policy: evaluation({ rule: { index: 3 } }) },
    ];
    const template = makeStep(calls, { expiresAt: step0(ladder) + 10_000, escalation: { ladder, rule: { index: 0 }, done: 0, nextAt: step0(ladder) } });
    template.decisions['apv-1'] = { outcome: 'approved', userId: 'UBOB', at: template.createdAt };
    const step = await createStep(template);
    const stop = () => commitTransition(store, step.stepId, (current) => escalateTransition(current, { now: step.createdAt + 150 })?.transition);
    expect((await Promise.all([1, 2, 3].map(stop))).filter(Boolean)).toHaveLength(1);
    const stopped = await store.getStep(step.stepId);
    expect(stopped?.escalation?.done).toBe(0);
    expect(stopped?.escalation?.nextAt).toBeUndefined();
    expect((await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'escalated' && event.stepId === step.stepId)).toEqual([]);
  });

  it("puts a stopped ladder's next hop back on the schedule, in the edit's write, when the edit moves a call under its rule", async () => {
    const ladder = [
      { afterMs: 100, remind: true, addApprovers: [] },
      { afterMs: 5_000, remind: false, addApprovers: [{ kind: 'user' as const, userId: 'U0LEAD' }] },
    ];
    const staging = evaluation({ rule: { index: 1, fingerprint: 'staging' }, approvers: [{ kind: 'user', userId: 'U0STAGEOWNER' }], escalation: ladder });
    const prod = evaluation({ rule: { index: 0, fingerprint: 'prod' }, approvers: [{ kind: 'user', userId: 'U0SRELEAD' }] });
    // The ladder's call was edited to prod before its first hop, which then found nobody under the staging rule.
    // Requested now: the store's clock judges the edit against the deadline.
    const requestedAt = Date.now();
    const template = makeStep([{ approvalId: 'apv-1', input: { namespace: 'staging' }, policy: staging }], { createdAt: requestedAt, expiresAt: requestedAt + ladder[0]!.afterMs + 10_000, escalation: { ladder, rule: { index: 1, fingerprint: 'staging' }, done: 0 } });
    const { createdAt } = template;
    template.calls[0]!.versions!.push({ number: 1, input: { namespace: 'prod' }, submittedInput: { namespace: 'prod' }, inputHash: 'prod', editedBy: 'U0STAGEOWNER', at: createdAt + 50, policy: prod });
    const step = await createStep(template);
    expect(await store.dueSteps({ kind: 'escalation', now: createdAt + 10_000, limit: 1000 })).not.toContain(step.stepId);

    const action: CallAction = { kind: 'edit', fromVersion: 1, input: { namespace: 'staging' }, submittedInput: { namespace: 'staging' }, policy: staging };
    const edited = await commitTransition(store, step.stepId, (current) => {
      const result = applyCallAction(current, { stepId: step.stepId, approvalId: 'apv-1', userId: 'U0SRELEAD', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action }, { now: createdAt + 2_000, groupMembers: new Map(), newGrantId: randomUUID });
      return result.ok ? result.transition : undefined;
    });
    // The hop that found nobody is overdue: due at the edit.
    expect(edited?.escalation).toMatchObject({ done: 0, nextAt: createdAt + 2_000 });
    expect(await store.dueSteps({ kind: 'escalation', now: createdAt + 1_999, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'escalation', now: createdAt + 2_000, limit: 1000 })).toContain(step.stepId);
    await store.unschedule(step.stepId);
  });

  it("moves the expiry and reminder schedules when an edit brings the step's deadlines forward", async () => {
    // Requested now: the store's clock judges the edit against the deadline.
    const template = makeStep([{ approvalId: 'apv-1', input: { namespace: 'staging' } }], { createdAt: Date.now() });
    const { createdAt } = template;
    const step = await createStep({ ...template, expiresAt: createdAt + 60_000, remindAt: createdAt + 30_000 });
    const prod = evaluation({ approvers: [{ kind: 'user', userId: 'U0CAROL' }], expiryMs: 10_000, reminderMs: 5_000 });
    const action: CallAction = { kind: 'edit', fromVersion: 0, input: { namespace: 'prod' }, submittedInput: { namespace: 'prod' }, policy: prod };
    await commitTransition(store, step.stepId, (current) => {
      const result = applyCallAction(current, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UBOB', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action }, { now: createdAt + 2_000, groupMembers: new Map(), newGrantId: randomUUID });
      return result.ok ? result.transition : undefined;
    });
    expect(await store.dueSteps({ kind: 'expiry', now: createdAt + 9_999, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'expiry', now: createdAt + 10_000, limit: 1000 })).toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'reminder', now: createdAt + 4_999, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'reminder', now: createdAt + 5_000, limit: 1000 })).toContain(step.stepId);
    await store.unschedule(step.stepId);
  });

  it('drops a step that can no longer expire from the schedules', async () => {
    const step = await createStep(makeStep(['apv-1'], { expiresAt: 1_000, remindAt: 500 }));
    await store.unschedule(step.stepId);
    expect(await store.dueSteps({ kind: 'expiry', now: 2_000, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'reminder', now: 2_000, limit: 1000 })).not.toContain(step.stepId);
  });

  it('creates a grant with the approval that allows it, and lists it in its channel until it expires', async () => {
    const channel = `C${randomUUID().slice(0, 8).toUpperCase()}`;
    const step = await createStep(makeStep(['apv-1'], { channel }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } });
    const grants = await store.listGrants({ teamId: step.teamId, channel });
    expect(grants).toHaveLength(1);
    const grant = grants[0] as Grant;
    expect(grant).toMatchObject({ grantedBy: 'UBOB', scope: 'channel', toolName: 'restart_service' });
    expect(await store.listGrants({ teamId: step.teamId, channel: 'COTHER' })).toEqual([]);
    // The turn's own lookup, by a reader's clock at the grant's end, leaves it out.
    expect(await store.listGrants({ teamId: step.teamId, channel, hideEndedBy: grant.expiresAt })).toEqual([]);
  });

  it('revokes a grant once, with its audit record', async () => {
    const channel = `C${randomUUID().slice(0, 8).toUpperCase()}`;
    const step = await createStep(makeStep(['apv-1'], { channel }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0, grant: { scope: 'thread', hours: 1, identicalArgumentsOnly: true } });
    const [grant] = await store.listGrants({ teamId: step.teamId, channel });
    const revoke = () =>
      store.revokeGrant({ teamId: step.teamId, channel, grantId: grant!.grantId, audit: (stored) => ({ type: 'grant-revoked', grantId: stored.grantId, toolName: stored.toolName, scope: stored.scope, channel, userId: 'UCAROL', expiresAt: stored.expiresAt, identicalArgumentsOnly: true }) });
    const results = await Promise.all([revoke(), revoke()]);
    // No replica to wait for, so nothing unconfirmed.
    expect(results.filter(Boolean)).toEqual([{ grant }]);
    expect(await store.listGrants({ teamId: step.teamId, channel })).toEqual([]);
    expect((await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'grant-revoked' && event.grantId === grant!.grantId)).toHaveLength(1);
  });

  it("writes the marker of a call cleared by a grant only while that grant is stored and unexpired (by the store's clock), in the same write", async () => {
    const channel = `C${randomUUID().slice(0, 8).toUpperCase()}`;
    const step = await createStep(makeStep(['apv-1'], { channel }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } });
    const [grant] = await store.listGrants({ teamId: step.teamId, channel });
    const fence = await lock(`${step.teamId}:${channel}:${randomUUID()}`);
    const start = (toolCallId: string, location: { channel?: string; grantId?: string } = {}) =>
      store.markExecuting({
        fence,
        toolCallId,
        marker: { toolName: 'restart_service', input: {}, startedAt: 1 },
        ttlMs: TTL,
        audit: [{ type: 'tool-started', teamId: step.teamId, channel, threadTs: '1.1', toolName: 'restart_service', toolCallId, input: {}, inputHash: 'h', basis: { kind: 'grant', grantId: location.grantId ?? grant!.grantId, grantedBy: 'UBOB' } }],
        grant: { teamId: step.teamId, channel: location.channel ?? channel, grantId: location.grantId ?? grant!.grantId },
      });
    const startedCalls = async () => (await audit.read({ sinceMs: 0 })).flatMap((event) => (event.type === 'tool-started' && event.channel === channel ? [event.toolCallId] : []));

    expect(await start('live')).toBe('marked');
    // A grant over by the store's clock: "stamps a grant's end by the store's clock" below.
    expect(await start('other-channel', { channel: 'COTHER' })).toBe('grant-gone');
    await store.revokeGrant({ teamId: step.teamId, channel, grantId: grant!.grantId, audit: (stored) => ({ type: 'grant-revoked', grantId: stored.grantId, toolName: stored.toolName, scope: stored.scope, channel, userId: 'UCAROL', expiresAt: stored.expiresAt, identicalArgumentsOnly: false }) });
    expect(await start('revoked')).toBe('grant-gone');

    // Refused calls leave no marker (a successor would think they may have run) and no tool-started.
    expect([...(await store.executingCalls(fence.threadKey)).keys()]).toEqual(['live']);
    expect(await startedCalls()).toEqual(['live']);
  });

  it("stamps a grant's end by the store's clock (Redis's TIME), not the granting replica's, and only that clock removes it", async () => {
    // The store's clock, moved by the case; the replica that takes the click runs ten minutes ahead of it.
    let storeNow = Date.now();
    const skewed = create({ clock: () => storeNow });
    try {
      const channel = `C${randomUUID().slice(0, 8).toUpperCase()}`;
      const step = await createStep(makeStep(['apv-1'], { channel }), skewed.store);
      const { teamId } = step;
      await act(step.stepId, 'UBOB', { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } }, { now: storeNow + 10 * 60_000, on: skewed.store });
      const [grant] = await skewed.store.listGrants({ teamId, channel });
      // "For 1 h" from the write, by the store's clock; the trail says the same end.
      expect(grant).toMatchObject({ createdAt: storeNow, expiresAt: storeNow + 60 * 60_000 });
      const created = (await skewed.audit.read({ sinceMs: 0 })).filter((event) => event.type === 'grant-created');
      expect(created).toMatchObject([{ grantId: grant!.grantId, expiresAt: grant!.expiresAt }]);

      // Held past the case's hour, so only the grant decides.
      const fence = await lock(`${teamId}:${channel}:${randomUUID()}`, 3 * 60 * 60_000, skewed.store);
      const start = (toolCallId: string) =>
        skewed.store.markExecuting({
          fence,
          toolCallId,
          marker: { toolName: 'restart_service', input: {}, startedAt: 1 },
          ttlMs: TTL,
          audit: [{ type: 'tool-started', teamId, channel, threadTs: '1.1', toolName: 'restart_service', toolCallId, input: {}, inputHash: 'h', basis: { kind: 'grant', grantId: grant!.grantId, grantedBy: 'UBOB' } }],
          grant: { teamId, channel, grantId: grant!.grantId },
        });

      // 55 minutes on: the turn's own lookup on a replica whose clock runs an hour fast thinks it over and
      // leaves it out (it asks with a card), but the grant stays for the others; and what lists or revokes
      // grants (no `hideEndedBy`) still finds it there, so a Revoke on that replica takes it back.
      storeNow += 55 * 60_000;
      expect(await skewed.store.listGrants({ teamId, channel, hideEndedBy: storeNow + 60 * 60_000 })).toEqual([]);
      expect(await skewed.store.listGrants({ teamId, channel })).toEqual([grant]);
      expect(await skewed.store.listTeamGrants({ teamId })).toEqual([grant]);
      expect(await skewed.store.listGrants({ teamId, channel, hideEndedBy: storeNow })).toEqual([grant]);
      expect(await start('in-time')).toBe('marked');

      // 65 minutes after it was given, by the store's clock: over, whatever the granting replica's said, and
      // removed even for a reader whose clock runs behind.
      storeNow += 10 * 60_000;
      expect(await start('late')).toBe('grant-gone');
      expect(await skewed.store.listGrants({ teamId, channel, hideEndedBy: storeNow - 60 * 60_000 })).toEqual([]);
      expect(await skewed.store.listGrants({ teamId, channel })).toEqual([]);
      expect(await skewed.store.listTeamGrants({ teamId })).toEqual([]);
    } finally {
      await skewed.store.close();
      await skewed.audit.close();
    }
  });

  it("lists a channel's open steps and forgets closed ones", async () => {
    const open = await createStep(makeStep(['apv-1'], { channel: 'CPENDING' }));
    const closed = await createStep(makeStep(['apv-1'], { channel: 'CPENDING', createdAt: open.createdAt + 1 }));
    await commitTransition(store, closed.stepId, (current) => supersedeTransition(current, { userId: 'UALICE', now: 3 }));
    expect((await store.listPendingSteps({ teamId: open.teamId, channel: 'CPENDING', limit: 10 })).map((step) => step.stepId)).toEqual([open.stepId]);
  });

  it("lists a workspace's open steps across channels, newest first, and drops a step in the write that closes it", async () => {
    const teamId = `T${randomUUID().slice(0, 8).toUpperCase()}`;
    const older = await createStep(makeStep(['apv-1'], { teamId, channel: 'CONE' }));
    const newer = await createStep(makeStep(['apv-1'], { teamId, channel: 'CTWO', createdAt: older.createdAt + 1 }));
    // Closed steps newer than every open one: a bounded read finds the open ones only if closing took them off.
    for (const offset of [2, 3, 4]) {
      const decided = await createStep(makeStep(['apv-1'], { teamId, channel: 'CTWO', createdAt: older.createdAt + offset }));
      await act(decided.stepId, 'UBOB', { kind: 'deny' });
    }
    await createStep(makeStep(['apv-1'], { channel: 'CONE' }));
    expect((await store.listOpenSteps({ teamId, limit: 10 })).map((step) => step.stepId)).toEqual([newer.stepId, older.stepId]);
    expect((await store.listOpenSteps({ teamId, limit: 1 })).map((step) => step.stepId)).toEqual([newer.stepId]);
    expect(await store.teamsWithOpenSteps()).toContain(teamId);
  });

  it('reads a step or thread a newer release stored as that (NewerSchemaError), never as gone, and lists past such a step, keeping it', async () => {
    const teamId = `T${randomUUID().slice(0, 8).toUpperCase()}`;
    const template = makeStep(['apv-1'], { teamId, channel: 'CNEWER' });
    const newer = await createStep({ ...template, schemaVersion: PENDING_STEP_SCHEMA_VERSION + 1 } as unknown as PendingStep);
    const open = await createStep(makeStep(['apv-1'], { teamId, channel: 'CNEWER', createdAt: template.createdAt - 1 }));
    const refusal = { code: ErrorCode.NewerSchema, kind: 'step', id: newer.stepId, found: PENDING_STEP_SCHEMA_VERSION + 1, readable: PENDING_STEP_SCHEMA_VERSION };
    await expect(store.getStep(newer.stepId)).rejects.toMatchObject(refusal);
    for (const read of [() => store.listOpenSteps({ teamId, limit: 10 }), () => store.listPendingSteps({ teamId, channel: 'CNEWER', limit: 10 })]) {
      expect((await read()).map((step) => step.stepId)).toEqual([open.stepId]);
    }
    // Still stored as it was: a listing skips it, never drops it.
    await expect(store.getStep(newer.stepId)).rejects.toMatchObject(refusal);

    const threadKey = `${teamId}:CNEWER:${uniqueTs()}`;
    const fence = await lock(threadKey);
    await store.saveThread({ ...newThreadState({ teamId, channel: 'CNEWER', threadTs: '1.1' }, 1), threadKey, schemaVersion: THREAD_STATE_SCHEMA_VERSION + 1 } as unknown as ThreadState, TTL, fence);
    const threadRefusal = { code: ErrorCode.NewerSchema, kind: 'thread', id: threadKey, found: THREAD_STATE_SCHEMA_VERSION + 1 };
    await expect(store.getThread(threadKey)).rejects.toMatchObject(threadRefusal);
    await expect(store.getThreadAndDeletion(threadKey, { channel: 'CNEWER', ts: '1.2' })).rejects.toMatchObject(threadRefusal);
    await expect(store.getStepAndThread(open.stepId, threadKey)).rejects.toMatchObject(threadRefusal);
  });

  it('puts off only a scheduled entry, and never earlier than it was (what a sweep does with a step it cannot read)', async () => {
    const step = await createStep(makeStep(['apv-1'], { expiresAt: 1_000, remindAt: 500 }));
    await store.postponeDue({ kind: 'expiry', stepId: step.stepId, until: 5_000 });
    await store.postponeDue({ kind: 'expiry', stepId: step.stepId, until: 2_000 });
    expect(await store.dueSteps({ kind: 'expiry', now: 4_999, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'expiry', now: 5_000, limit: 1000 })).toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'reminder', now: 500, limit: 1000 })).toContain(step.stepId);
    // Not on the escalation schedule (or taken off it meanwhile): it stays off.
    await store.postponeDue({ kind: 'escalation', stepId: step.stepId, until: 5_000 });
    expect(await store.dueSteps({ kind: 'escalation', now: 10_000, limit: 1000 })).not.toContain(step.stepId);
    await store.unschedule(step.stepId);
  });

  it('puts off only a decided step still unresumed, and never earlier than it was (a resume left to a newer release)', async () => {
    // A thread of its own: other tests hold locks on the default one.
    const step = await createStep(makeStep(['apv-1'], { threadTs: uniqueTs() }));
    await act(step.stepId, 'UBOB', { kind: 'approve', version: 0 });
    const until = Date.now() + 60_000;
    await store.postponeCompleted({ stepId: step.stepId, until });
    await store.postponeCompleted({ stepId: step.stepId, until: until - 30_000 });
    expect(await store.completedSteps({ before: until - 1, limit: 1000 })).not.toContain(step.stepId);
    expect(await store.completedSteps({ before: until, limit: 1000 })).toContain(step.stepId);
    // Claimed meanwhile: it stays off.
    const holder = await lock(step.threadKey);
    expect(await commitTransition(store, step.stepId, (current) => claimResumeTransition(current, holder))).toBeDefined();
    await store.postponeCompleted({ stepId: step.stepId, until: until + 1 });
    expect(await store.completedSteps({ before: until + 1, limit: 1000 })).not.toContain(step.stepId);
  });

  it('keeps a take-back Slack did not complete until it is forgotten: due from its time, moved when kept again, forgotten once', async () => {
    // Two channels: their threads may live in different shards, which the sweep's read covers alike.
    const answer = { channel: 'CTAKE1', ts: '1700000001.000200', threadKey: 'T1:CTAKE1:1700000001.000100', since: 100 };
    const card = { channel: 'CTAKE2', ts: '1700000002.000200', threadKey: 'T1:CTAKE2:1700000002.000100', stepId: newStepId('T1:CTAKE2:1700000002.000100'), since: 100 };
    await store.scheduleTakeBack(answer, 1_000);
    await store.scheduleTakeBack(card, 500);
    expect(await store.dueTakeBacks({ now: 499, limit: 10 })).toEqual([]);
    expect(await store.dueTakeBacks({ now: 1_000, limit: 10 })).toEqual([card, answer]);
    expect(await store.dueTakeBacks({ now: 1_000, limit: 1 })).toEqual([card]);
    // Kept again (a try that failed): due at its new time only, not twice.
    await store.scheduleTakeBack(card, 2_000);
    expect(await store.dueTakeBacks({ now: 1_999, limit: 10 })).toEqual([answer]);
    // A sweep's claim moves it once; a second claim for the same time does not.
    expect(await store.postponeTakeBack(card, 3_000)).toBe(true);
    expect(await store.postponeTakeBack(card, 3_000)).toBe(false);
    expect(await store.dueTakeBacks({ now: 2_999, limit: 10 })).toEqual([answer]);
    expect(await store.forgetTakeBack(answer)).toBe(true);
    expect(await store.forgetTakeBack(answer)).toBe(false);
    // Forgotten, it is not kept again by a claim that comes late.
    expect(await store.postponeTakeBack(answer, 4_000)).toBe(false);
    expect(await store.dueTakeBacks({ now: 5_000, limit: 10 })).toEqual([card]);
    expect(await store.forgetTakeBack(card)).toBe(true);
    expect(await store.dueTakeBacks({ now: 5_000, limit: 10 })).toEqual([]);
  });

  it('keeps a card refresh Slack did not complete until it is forgotten: due from its time, moved when kept again, forgotten once', async () => {
    // Two threads in two channels: their steps may live in different shards, which the sweep's read covers alike.
    const first = { stepId: newStepId('T1:CREDRAW1:1700000001.000100'), since: 100 };
    const second = { stepId: newStepId('T1:CREDRAW2:1700000002.000100'), since: 100 };
    await store.scheduleCardRefresh(first, 1_000);
    await store.scheduleCardRefresh(second, 500);
    expect(await store.dueCardRefreshes({ now: 499, limit: 10 })).toEqual([]);
    expect(await store.dueCardRefreshes({ now: 1_000, limit: 10 })).toEqual([second, first]);
    expect(await store.dueCardRefreshes({ now: 1_000, limit: 1 })).toEqual([second]);
    // Kept again (a try that failed): due at its new time only, not twice.
    await store.scheduleCardRefresh(second, 2_000);
    expect(await store.dueCardRefreshes({ now: 1_999, limit: 10 })).toEqual([first]);
    // A sweep's claim moves it once; a second claim for the same time does not.
    expect(await store.postponeCardRefresh(second, 3_000)).toBe(true);
    expect(await store.postponeCardRefresh(second, 3_000)).toBe(false);
    expect(await store.forgetCardRefresh(first)).toBe(true);
    expect(await store.forgetCardRefresh(first)).toBe(false);
    // Forgotten, it is not kept again by a claim that comes late.
    expect(await store.postponeCardRefresh(first, 4_000)).toBe(false);
    expect(await store.dueCardRefreshes({ now: 5_000, limit: 10 })).toEqual([second]);
    expect(await store.forgetCardRefresh(second)).toBe(true);
    expect(await store.dueCardRefreshes({ now: 5_000, limit: 10 })).toEqual([]);
  });

  it('keeps a card refresh that looks for a card posted again beside the refresh it came from, each claimed and forgotten on its own', async () => {
    const threadKey = 'T1:CUNCONF1:1700000005.000100';
    const refresh = { stepId: newStepId(threadKey), since: 100 };
    // Fields in another order than the store writes them: the refresh read back is still the one claimed and forgotten.
    const unconfirmed = { threadKey, threadTs: '1700000005.000100', channel: 'CUNCONF1', revision: 3, replacing: '1700000005.000200', after: '1700000005.000200', text: 'Approval needed: restart', mark: 'countersign_post_1' };
    const looking = { unconfirmed, since: 100, stepId: refresh.stepId };
    await store.scheduleCardRefresh(refresh, 1_000);
    await store.scheduleCardRefresh(looking, 1_000);
    expect(await store.dueCardRefreshes({ now: 1_000, limit: 10 })).toEqual(expect.arrayContaining([refresh, looking]));
    expect(await store.forgetCardRefresh(refresh)).toBe(true);
    expect(await store.dueCardRefreshes({ now: 1_000, limit: 10 })).toEqual([looking]);
    const [due] = await store.dueCardRefreshes({ now: 1_000, limit: 10 });
    expect(await store.claimCardRefresh(due!, { now: 2_000, until: 7_000 })).toBe(true);
    expect(await store.claimCardRefresh(looking, { now: 2_001, until: 7_001 })).toBe(false);
    expect(await store.forgetCardRefresh(due!)).toBe(true);
    expect(await store.dueCardRefreshes({ now: 20_000, limit: 10 })).toEqual([]);
  });

  it("keeps a card refresh that looks for a step's first card (no card it replaces), read back, claimed and forgotten as kept", async () => {
    const threadKey = 'T1:CUNCONF3:1700000007.000100';
    const unconfirmed = { mark: 'countersign_post_3', text: 'Approval needed: restart', after: '1700000007.000200', revision: 1, channel: 'CUNCONF3', threadTs: '1700000007.000100', threadKey };
    const looking = { stepId: newStepId(threadKey), since: 100, unconfirmed };
    await store.scheduleCardRefresh(looking, 1_000);
    const [due] = await store.dueCardRefreshes({ now: 1_000, limit: 10 });
    expect(due).toEqual(looking);
    expect(due!.unconfirmed).not.toHaveProperty('replacing');
    expect(await store.claimCardRefresh(due!, { now: 2_000, until: 7_000 })).toBe(true);
    expect(await store.forgetCardRefresh(due!)).toBe(true);
    expect(await store.dueCardRefreshes({ now: 20_000, limit: 10 })).toEqual([]);
  });

  it('keeps a card refresh that owes the notice of a card it recorded apart from the look it came from, read back with the card', async () => {
    const threadKey = 'T1:CUNCONF2:1700000006.000100';
    const stepId = newStepId(threadKey);
    const unconfirmed = { mark: 'countersign_post_2', text: 'Approval needed: restart', after: '1700000006.000200', replacing: '1700000006.000200', revision: 2, channel: 'CUNCONF2', threadTs: '1700000006.000100', threadKey };
    const looking = { stepId, since: 100, unconfirmed };
    // A refresh kept without `recorded` (as before the field existed) is another record than the one owing the notice.
    const owing = { stepId, since: 100, unconfirmed: { ...unconfirmed, recorded: '1700000006.000300' } };
    await store.scheduleCardRefresh(looking, 1_000);
    await store.scheduleCardRefresh(owing, 1_000);
    expect(await store.dueCardRefreshes({ now: 1_000, limit: 10 })).toEqual(expect.arrayContaining([looking, owing]));
    expect(await store.forgetCardRefresh(looking)).toBe(true);
    const [due] = await store.dueCardRefreshes({ now: 1_000, limit: 10 });
    expect(due).toEqual(owing);
    expect(await store.claimCardRefresh(due!, { now: 2_000, until: 7_000 })).toBe(true);
    expect(await store.forgetCardRefresh(due!)).toBe(true);
    expect(await store.dueCardRefreshes({ now: 20_000, limit: 10 })).toEqual([]);
  });

  it("lets one sweep claim a due take-back or card refresh: a second claim with another `until` finds it no longer due", async () => {
    const takeBack = { channel: 'CCLAIM1', ts: '1700000003.000200', threadKey: 'T1:CCLAIM1:1700000003.000100', since: 100 };
    const refresh = { stepId: newStepId('T1:CCLAIM2:1700000004.000100'), since: 100 };
    await store.scheduleTakeBack(takeBack, 1_000);
    await store.scheduleCardRefresh(refresh, 1_000);
    // Not due yet by the claimer's clock: not claimed.
    expect(await store.claimTakeBack(takeBack, { now: 999, until: 6_000 })).toBe(false);
    expect(await store.claimCardRefresh(refresh, { now: 999, until: 6_000 })).toBe(false);
    // Two sweeps that read it due, their clocks a millisecond apart: only the first claim holds.
    expect(await store.claimTakeBack(takeBack, { now: 2_000, until: 7_000 })).toBe(true);
    expect(await store.claimTakeBack(takeBack, { now: 2_001, until: 7_001 })).toBe(false);
    expect(await store.claimCardRefresh(refresh, { now: 2_000, until: 7_000 })).toBe(true);
    expect(await store.claimCardRefresh(refresh, { now: 2_001, until: 7_001 })).toBe(false);
    // Due at the first claim's `until`, not moved by the second.
    expect(await store.dueTakeBacks({ now: 6_999, limit: 10 })).not.toContainEqual(takeBack);
    expect(await store.dueTakeBacks({ now: 7_000, limit: 10 })).toContainEqual(takeBack);
    expect(await store.dueCardRefreshes({ now: 6_999, limit: 10 })).not.toContainEqual(refresh);
    expect(await store.dueCardRefreshes({ now: 7_000, limit: 10 })).toContainEqual(refresh);
    // Forgotten, it is not kept again by a claim that comes late.
    expect(await store.forgetTakeBack(takeBack)).toBe(true);
    expect(await store.forgetCardRefresh(refresh)).toBe(true);
    expect(await store.claimTakeBack(takeBack, { now: 9_000, until: 14_000 })).toBe(false);
    expect(await store.claimCardRefresh(refresh, { now: 9_000, until: 14_000 })).toBe(false);
    expect(await store.dueTakeBacks({ now: 20_000, limit: 10 })).not.toContainEqual(takeBack);
    expect(await store.dueCardRefreshes({ now: 20_000, limit: 10 })).not.toContainEqual(refresh);
  });

  it("lists a workspace's grants across its channels", async () => {
    const teamId = `T${randomUUID().slice(0, 8).toUpperCase()}`;
    for (const channel of ['CGONE', 'CGTWO']) {
      const step = await createStep(makeStep(['apv-1'], { teamId, channel }));
      await act(step.stepId, 'UBOB', { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } });
    }
    const grants = await store.listTeamGrants({ teamId });
    expect(grants.map((grant) => grant.channel).sort()).toEqual(['CGONE', 'CGTWO']);
    // Their ends are judged by the store's clock only: "stamps a grant's end by the store's clock" above.
  });

  it('remembers which calls started, with what, until a save says they all have results', async () => {
    const fence = await lock(`T1:C1:${randomUUID()}`);
    await store.markExecuting({ fence, toolCallId: 'call_1', marker: { toolName: 'restart_service', input: { service: 'api' }, startedAt: 5 }, ttlMs: TTL, audit: [] });
    expect(await store.executingCalls(fence.threadKey)).toEqual(new Map([['call_1', { toolName: 'restart_service', input: { service: 'api' }, startedAt: 5 }]]));
    const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), threadKey: fence.threadKey };
    await store.saveThread(thread, TTL, fence);
    expect((await store.executingCalls(fence.threadKey)).size).toBe(1);
    await store.saveThread(thread, TTL, fence, { settled: true });
    expect((await store.executingCalls(fence.threadKey)).size).toBe(0);
  });
});
