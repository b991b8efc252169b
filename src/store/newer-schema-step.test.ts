import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createExpirySweeper, NEWER_RELEASE_RETRY_MS } from '../approvals/expiry-sweeper.js';
import { PENDING_STEP_SCHEMA_VERSION, type PendingStep } from '../approvals/pending-step.js';
import { evaluation, makeStep } from '../approvals/pending-step.test-support.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { newThreadState } from './thread-state.js';

/**
 * A rolling deploy (or a rollback) runs two releases on one Redis. The release after this one
 * writes steps with `schemaVersion: PENDING_STEP_SCHEMA_VERSION + 1`; this release (the "older
 * replica") cannot read them. It must leave them alone, so the release that can read them still
 * expires, escalates and lists them (a due schedule is only put off by `NEWER_RELEASE_RETRY_MS`, so
 * the older replica's sweeps go on to the steps they can read). Simulated here by rewriting the stored step's schemaVersion
 * through the raw key, then driving this release's code; "the newer replica" is simulated by
 * putting the version back (it reads what it wrote).
 */
const logger = pino({ level: 'silent' });
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };
const messenger = {
  postMention: async () => {},
  postNotice: async () => {},
  updateStepCard: async () => {},
  updateStepCopy: async () => {},
} as unknown as ThreadMessenger;

describe('a step written by a newer release, read by this one (Redis)', () => {
  const keyPrefix = `newer-schema:${randomUUID()}:`;
  const store = createRedisStore({ url: inject('redisUrl'), keyPrefix });
  const raw = new Redis(inject('redisUrl'));
  const keys = createRedisKeys({ keyPrefix });
  afterAll(async () => {
    await store.close();
    raw.disconnect();
  });

  async function create(step: PendingStep): Promise<void> {
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, step.createdAt), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await store.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);
  }

  /** What the newer release wrote: the same step, one schema version up. */
  async function setSchemaVersion(stepId: string, version: number): Promise<void> {
    const key = keys.ofStep(stepId).step(stepId);
    const data = JSON.parse((await raw.hget(key, 'data'))!) as { schemaVersion: number };
    data.schemaVersion = version;
    await raw.hset(key, 'data', JSON.stringify(data));
  }

  async function scheduled(stepId: string): Promise<Record<'expiry' | 'reminder' | 'escalation', string | null>> {
    const at = keys.ofStep(stepId);
    return {
      expiry: await raw.zscore(at.schedule('expiry'), stepId),
      reminder: await raw.zscore(at.schedule('reminder'), stepId),
      escalation: await raw.zscore(at.schedule('escalation'), stepId),
    };
  }

  it("an older replica's expiry sweep keeps a newer step's expiry, so the newer replica still expires it", async () => {
    const threadTs = `1700000000.${randomUUID().slice(0, 6)}`;
    const step = makeStep(['apv-1'], { threadTs, threadKey: `T0TEAM:C0OPS:${threadTs}`, createdAt: Date.now() - 10_000 });
    step.expiresAt = step.createdAt + 1_000;
    await create(step);
    await setSchemaVersion(step.stepId, PENDING_STEP_SCHEMA_VERSION + 1);
    const before = await scheduled(step.stepId);
    expect(before.expiry).not.toBeNull();

    // This release sweeps while the step's expiry is due: it cannot read the step.
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 5_000 }).sweepOnce();
    // The step is still there, pending, in the newer format: nothing closed it.
    expect(await raw.hget(keys.ofStep(step.stepId).step(step.stepId), 'phase')).toBe('pending');

    // The newer release (which reads its own format) sweeps next: the expiry must still happen.
    await setSchemaVersion(step.stepId, PENDING_STEP_SCHEMA_VERSION);
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 5_000 + NEWER_RELEASE_RETRY_MS }).sweepOnce();
    expect((await store.getStep(step.stepId))?.phase).toBe('complete');
  });

  it("an older replica's escalation sweep keeps a newer step's next hop, so the newer replica still escalates it", async () => {
    const threadTs = `1700000000.${randomUUID().slice(0, 6)}`;
    const ladder = [{ afterMs: 100, remind: true, addApprovers: [{ kind: 'group' as const, groupId: 'S0LEADS' }] }];
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: ladder }) }], {
      threadTs,
      threadKey: `T0TEAM:C0OPS:${threadTs}`,
      createdAt: Date.now() - 10_000,
    });
    step.escalation = { ladder, rule: { index: 0 }, done: 0, nextAt: step.createdAt + 100 };
    step.expiresAt = step.createdAt + 3_600_000;
    await create(step);
    await setSchemaVersion(step.stepId, PENDING_STEP_SCHEMA_VERSION + 1);
    expect((await scheduled(step.stepId)).escalation).not.toBeNull();

    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 500 }).sweepOnce();

    await setSchemaVersion(step.stepId, PENDING_STEP_SCHEMA_VERSION);
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 500 + NEWER_RELEASE_RETRY_MS }).sweepOnce();
    expect((await store.getStep(step.stepId))?.escalation?.done).toBe(1);
  });

  it("an older replica's sweep keeps a newer step's schedules (expiry, reminder, escalation): the due ones put off a little, the others as they were", async () => {
    const threadTs = `1700000000.${randomUUID().slice(0, 6)}`;
    const ladder = [{ afterMs: 60_000, remind: true, addApprovers: [] }];
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ escalation: ladder }) }], { threadTs, threadKey: `T0TEAM:C0OPS:${threadTs}`, createdAt: Date.now() - 10_000 });
    step.escalation = { ladder, rule: { index: 0 }, done: 0, nextAt: step.createdAt + 60_000 };
    step.expiresAt = step.createdAt + 1_000;
    step.remindAt = step.createdAt + 2_000;
    await create(step);
    await setSchemaVersion(step.stepId, PENDING_STEP_SCHEMA_VERSION + 1);
    const before = await scheduled(step.stepId);

    // The expiry and the reminder are due, the escalation hop is not.
    const sweptAt = step.createdAt + 5_000;
    await createExpirySweeper({ store, messenger, worker, logger, now: () => sweptAt }).sweepOnce();

    const putOff = String(sweptAt + NEWER_RELEASE_RETRY_MS);
    expect(await scheduled(step.stepId)).toEqual({ expiry: putOff, reminder: putOff, escalation: before.escalation });
  });

  it("an older replica's App Home and /countersign reads keep a newer step in the indexes the newer replica lists from", async () => {
    const threadTs = `1700000000.${randomUUID().slice(0, 6)}`;
    const channel = `C${randomUUID().slice(0, 8).toUpperCase()}`;
    const step = makeStep(['apv-1'], { threadTs, channel, threadKey: `T0TEAM:${channel}:${threadTs}`, createdAt: Date.now() });
    step.expiresAt = step.createdAt + 3_600_000;
    await create(step);
    await setSchemaVersion(step.stepId, PENDING_STEP_SCHEMA_VERSION + 1);

    // The older replica renders someone's App Home and answers `/countersign` in the channel.
    await store.listOpenSteps({ teamId: step.teamId, limit: 50 });
    await store.listPendingSteps({ teamId: step.teamId, channel, limit: 10 });

    // The newer replica lists the same workspace and channel: the request is still waiting.
    await setSchemaVersion(step.stepId, PENDING_STEP_SCHEMA_VERSION);
    expect((await store.listOpenSteps({ teamId: step.teamId, limit: 50 })).map((open) => open.stepId)).toContain(step.stepId);
    expect((await store.listPendingSteps({ teamId: step.teamId, channel, limit: 10 })).map((open) => open.stepId)).toContain(step.stepId);
  });
});
