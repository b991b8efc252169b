import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import { createMemoryStore } from './memory-store.js';
import { createRedisStore } from './redis-store.js';
import type { StateStore } from './state-store.js';

const TTL = 60_000;

function makeStep(approvalIds: string[]): PendingStep {
  return {
    schemaVersion: 1,
    stepId: `step-${randomUUID()}`,
    threadKey: 'T1:C1:1.000001',
    teamId: 'T1',
    channel: 'C1',
    threadTs: '1.000001',
    requesterId: 'UALICE',
    createdAt: 1_700_000_000_000,
    calls: approvalIds.map((approvalId, index) => ({
      approvalId,
      toolCallId: `call_${index}`,
      toolName: 'restart_service',
      description: 'Restart a service',
      input: { service: 'api', namespace: 'staging', nested: { list: [1, 2.5, 'x'] } },
    })),
    decisions: {},
    phase: 'pending',
    revision: 0,
  };
}

const approve = (userId: string): Decision => ({ outcome: 'approved', userId, at: 1_700_000_001_000 });

const stores: Array<[string, () => StateStore]> = [
  ['memory', () => createMemoryStore()],
  ['redis', () => createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` })],
];

describe.each(stores)('%s state store', (_name, createStore) => {
  const store = createStore();
  afterAll(() => store.close());

  it('claims a delivery once, and refuses when any of several keys was seen', async () => {
    expect(await store.claimOnce(['event:Ev1'], TTL)).toBe(true);
    expect(await store.claimOnce(['event:Ev1'], TTL)).toBe(false);
    expect(await store.claimOnce(['event:Ev2', 'message:C1:1.1'], TTL)).toBe(true);
    expect(await store.claimOnce(['event:Ev3', 'message:C1:1.1'], TTL)).toBe(false);
  });

  it('starts following a thread once and never overwrites its history', async () => {
    const thread = { schemaVersion: 1 as const, threadKey: `T1:C1:${randomUUID()}`, teamId: 'T1', channel: 'C1', threadTs: '1.1', messages: [], updatedAt: 1 };
    expect(await store.createThreadIfAbsent(thread, TTL)).toBe(true);
    await store.saveThread({ ...thread, messages: [{ role: 'user', content: 'hi' }] }, TTL);
    expect(await store.createThreadIfAbsent(thread, TTL)).toBe(false);
    expect((await store.getThread(thread.threadKey))?.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('round-trips a step with its input intact', async () => {
    const step = makeStep(['apv-1']);
    await store.createStep(step, TTL);
    await store.setStepCard(step.stepId, '123.456');
    expect(await store.getStep(step.stepId)).toEqual({ ...step, cardTs: '123.456' });
    expect(await store.getStep('missing')).toBeUndefined();
  });

  it('keeps the first decision and tells later clickers who decided', async () => {
    const step = makeStep(['apv-1', 'apv-2']);
    await store.createStep(step, TTL);
    const first = await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UBOB') });
    expect(first).toMatchObject({ status: 'recorded', completedStep: false });
    const second = await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UCAROL') });
    expect(second).toMatchObject({ status: 'already-decided', decision: { userId: 'UBOB' } });
    expect(await store.decide({ stepId: step.stepId, approvalId: 'apv-9', decision: approve('UBOB') })).toEqual({ status: 'not-found' });
    expect(await store.decide({ stepId: 'nope', approvalId: 'apv-1', decision: approve('UBOB') })).toEqual({ status: 'not-found' });
  });

  it('records exactly one of many concurrent clicks on one call', async () => {
    const step = makeStep(['apv-1']);
    await store.createStep(step, TTL);
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, index) => store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve(`U${index}`) })),
    );
    expect(results.filter((result) => result.status === 'recorded')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'recorded' && result.completedStep)).toHaveLength(1);
  });

  it('reports completion to exactly one decider when calls are decided concurrently', async () => {
    const ids = ['a', 'b', 'c', 'd'];
    const step = makeStep(ids);
    await store.createStep(step, TTL);
    const results = await Promise.all(ids.map((id) => store.decide({ stepId: step.stepId, approvalId: id, decision: approve('UBOB') })));
    expect(results.filter((result) => result.status === 'recorded' && result.completedStep)).toHaveLength(1);
    const stored = await store.getStep(step.stepId);
    expect(stored?.phase).toBe('complete');
    expect(stored?.revision).toBe(4);
  });

  it('lets only one caller claim the resume', async () => {
    const step = makeStep(['apv-1']);
    await store.createStep(step, TTL);
    expect(await store.claimResume(step.stepId)).toBeUndefined();
    await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UBOB') });
    const claims = await Promise.all([1, 2, 3].map(() => store.claimResume(step.stepId)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(claims.find(Boolean)?.phase).toBe('resumed');
  });

  it('supersedes only undecided calls, and only while pending', async () => {
    const step = makeStep(['apv-1', 'apv-2']);
    await store.createStep(step, TTL);
    await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UBOB') });
    const superseded = await store.supersede(step.stepId, { outcome: 'superseded', userId: 'UALICE', at: 1 });
    expect(superseded?.phase).toBe('superseded');
    expect(superseded?.decisions['apv-1']?.outcome).toBe('approved');
    expect(superseded?.decisions['apv-2']?.outcome).toBe('superseded');
    expect(await store.supersede(step.stepId, { outcome: 'superseded', userId: 'UALICE', at: 1 })).toBeUndefined();
    const late = await store.decide({ stepId: step.stepId, approvalId: 'apv-2', decision: approve('UBOB') });
    expect(late.status).toBe('already-decided');
  });

  it('hands the thread lock to one enqueuer and never strands queued work', async () => {
    const thread = `T1:C1:${randomUUID()}`;
    const token = await store.enqueueWork(thread, 'one', TTL);
    expect(token).toBeDefined();
    expect(await store.enqueueWork(thread, 'two', TTL)).toBeUndefined();
    expect(await store.takeWork(thread)).toBe('one');
    await store.finishWork(thread);
    expect(await store.releaseLockIfIdle(thread, token!, TTL)).toBe(false);
    expect(await store.takeWork(thread)).toBe('two');
    expect(await store.releaseLockIfIdle(thread, token!, TTL)).toBe(false);
    await store.finishWork(thread);
    expect(await store.releaseLockIfIdle(thread, token!, TTL)).toBe(true);
    expect(await store.takeWork(thread)).toBeUndefined();
    expect(await store.enqueueWork(thread, 'three', TTL)).toBeDefined();
  });

  it('lets a lock expire so a crashed holder does not block the thread forever', async () => {
    const thread = `T1:C1:${randomUUID()}`;
    const token = await store.enqueueWork(thread, 'one', 30);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await store.extendLock(thread, token!, 30)).toBe(false);
    expect(await store.enqueueWork(thread, 'two', TTL)).toBeDefined();
  });

  it('counts approvals towards a quorum of distinct people, and decides when it is reached', async () => {
    const step = makeStep(['apv-1']);
    await store.createStep(step, TTL);
    const first = await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UBOB'), required: 2 });
    expect(first.status).toBe('partial');
    const again = await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UBOB'), required: 2 });
    expect(again.status).toBe('already-approved-by-you');
    const second = await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: { ...approve('UCAROL'), at: 1_700_000_002_000 }, required: 2 });
    expect(second).toMatchObject({ status: 'recorded', completedStep: true });
    const stored = await store.getStep(step.stepId);
    expect(stored?.approvals?.['apv-1']?.map((approval) => approval.userId)).toEqual(['UBOB', 'UCAROL']);
  });

  it('lets two different approvers racing for a quorum of two complete it exactly once', async () => {
    const step = makeStep(['apv-1']);
    await store.createStep(step, TTL);
    const results = await Promise.all(
      ['UBOB', 'UCAROL', 'UBOB', 'UCAROL'].map((user) => store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve(user), required: 2 })),
    );
    expect(results.filter((result) => result.status === 'recorded')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'partial')).toHaveLength(1);
  });

  it('expires only pending steps, once, when their time has come', async () => {
    const step = { ...makeStep(['apv-1', 'apv-2']), expiresAt: 1_000, remindAt: 500 };
    await store.createStep(step, TTL);
    await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UBOB') });
    expect(await store.dueSteps({ kind: 'expiry', now: 999, limit: 10 })).not.toContain(step.stepId);
    expect(await store.dueSteps({ kind: 'reminder', now: 600, limit: 10 })).toContain(step.stepId);
    const claims = await Promise.all([store.claimReminder(step.stepId), store.claimReminder(step.stepId)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.dueSteps({ kind: 'expiry', now: 1_000, limit: 10 })).toContain(step.stepId);
    const expired = await Promise.all([1, 2].map(() => store.expireStep(step.stepId, { outcome: 'expired', userId: 'USYSTEM', at: 1_000 })));
    expect(expired.filter(Boolean)).toHaveLength(1);
    const closed = expired.find(Boolean)!;
    expect(closed.phase).toBe('complete');
    expect(closed.decisions['apv-1']?.outcome).toBe('approved');
    expect(closed.decisions['apv-2']?.outcome).toBe('expired');
    expect(await store.dueSteps({ kind: 'expiry', now: 2_000, limit: 10 })).not.toContain(step.stepId);
    expect(await store.claimResume(step.stepId)).toBeDefined();
  });

  it('keeps grants per channel until they expire or are revoked', async () => {
    const channel = `C${randomUUID().slice(0, 8)}`;
    const grant = {
      grantId: 'g1',
      teamId: 'T1',
      channel,
      scope: 'channel' as const,
      toolName: 'restart_service',
      identicalArgumentsOnly: false,
      evaluation: { rule: undefined, needsApproval: true, approvers: [{ kind: 'channel' as const }], required: 1, allowSelfApproval: true, expiryMs: 1, onExpiry: 'stop' as const, autoApprove: 'allowed' as const, grants: 'allowed' as const },
      grantedBy: 'UBOB',
      createdAt: 1_000,
      expiresAt: Date.now() + 60_000,
    };
    await store.saveGrant(grant);
    await store.saveGrant({ ...grant, grantId: 'g2', expiresAt: Date.now() - 1 });
    expect((await store.listGrants({ teamId: 'T1', channel, now: Date.now() })).map((each) => each.grantId)).toEqual(['g1']);
    expect(await store.listGrants({ teamId: 'T1', channel: 'Cother', now: Date.now() })).toEqual([]);
    expect((await store.revokeGrant({ teamId: 'T1', channel, grantId: 'g1' }))?.grantedBy).toBe('UBOB');
    expect(await store.revokeGrant({ teamId: 'T1', channel, grantId: 'g1' })).toBeUndefined();
    expect(await store.listGrants({ teamId: 'T1', channel, now: Date.now() })).toEqual([]);
  });

  it("lists a channel's open steps and forgets closed ones", async () => {
    const open = { ...makeStep(['apv-1']), channel: 'CPENDING' };
    const closed = { ...makeStep(['apv-1']), channel: 'CPENDING', createdAt: open.createdAt + 1 };
    await store.createStep(open, TTL);
    await store.createStep(closed, TTL);
    await store.supersede(closed.stepId, { outcome: 'superseded', userId: 'UALICE', at: 1 });
    expect((await store.listPendingSteps({ teamId: 'T1', channel: 'CPENDING', limit: 10 })).map((step) => step.stepId)).toEqual([open.stepId]);
  });

  it('keeps an item in flight until it is finished, so work a dead holder took is picked up by the next', async () => {
    const thread = `T1:C1:${randomUUID()}`;
    const token = await store.enqueueWork(thread, 'resume-step', 40);
    expect(await store.busyThreads({ limit: 1000 })).toContain(thread);
    expect(await store.takeWork(thread)).toBe('resume-step');
    // The holder dies here: no finishWork, no release. Its lock expires.
    expect(await store.tryLock(thread, TTL)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 80));
    const next = await store.tryLock(thread, TTL);
    expect(next).toBeDefined();
    expect(await store.takeLeftover(thread)).toBe('resume-step');
    await store.finishWork(thread);
    expect(await store.releaseLockIfIdle(thread, next!, TTL)).toBe(true);
    expect(await store.busyThreads({ limit: 1000 })).not.toContain(thread);
    expect(token).toBeDefined();
  });

  it('indexes complete steps until their resume is claimed, and remembers which calls started executing', async () => {
    const step = makeStep(['apv-1']);
    await store.createStep(step, TTL);
    await store.decide({ stepId: step.stepId, approvalId: 'apv-1', decision: approve('UBOB') });
    expect(await store.completedSteps({ before: Date.now() + 1_000_000_000_000, limit: 1000 })).toContain(step.stepId);
    await store.claimResume(step.stepId);
    expect(await store.completedSteps({ before: Date.now() + 1_000_000_000_000, limit: 1000 })).not.toContain(step.stepId);
    const thread = `T1:C1:${randomUUID()}`;
    await store.markExecuting(thread, 'call_1', TTL);
    expect(await store.executingCalls(thread)).toEqual(new Set(['call_1']));
  });
});
