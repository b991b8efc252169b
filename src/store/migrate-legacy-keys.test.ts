import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { applyCallAction } from '../approvals/transitions/call-action.js';
import { createRedisAuditLog } from './redis-audit-log.js';
import { createRedisStore } from './redis-store.js';
import { stepData } from './step-record.js';
import { newThreadState } from './thread-state.js';

const HOUR = 60 * 60 * 1000;

/**
 * An upgrade in place: the keys the previous version wrote (no hash tags, one global sorted set
 * per schedule) are what a running team has in Redis when the new version starts.
 */
describe('keys written by the version before sharding', () => {
  const redis = new Redis(inject('redisUrl'));
  afterAll(() => redis.disconnect());

  it('still hold a pending card that can be approved, scheduled, queued work, the fence and the audit trail', async () => {
    const keyPrefix = `legacy-${randomUUID()}:`;
    const step = makeStep(['apv-1'], { stepId: randomUUID().replaceAll('-', ''), expiresAt: Date.now() + HOUR });
    const thread = { ...newThreadState(step, 1), pendingStepId: step.stepId, messages: [{ role: 'user' as const, content: 'restart api' }] };
    const legacyToken = String(Date.now() + HOUR);
    await redis
      .multi()
      .hset(`${keyPrefix}step:${step.stepId}`, 'data', stepData(step), 'revision', '0', 'phase', 'pending')
      .set(`${keyPrefix}thread:${step.threadKey}`, JSON.stringify(thread))
      .set(`${keyPrefix}fence:${step.threadKey}`, legacyToken)
      .set(`${keyPrefix}lock:${step.threadKey}`, legacyToken, 'PX', HOUR)
      .rpush(`${keyPrefix}queue:${step.threadKey}`, 'queued-item')
      .zadd(`${keyPrefix}busy-threads`, 1, step.threadKey)
      .rpush(`${keyPrefix}ready-threads`, step.threadKey)
      .zadd(`${keyPrefix}expiries`, 1, step.stepId) // due: the sweeper must still find it
      .zadd(`${keyPrefix}pending:${step.teamId}:${step.channel}`, step.createdAt, step.stepId)
      .hset(`${keyPrefix}grants:${step.teamId}:${step.channel}`, 'g1', JSON.stringify({ grantId: 'g1', createdAt: 1, expiresAt: Date.now() + HOUR }))
      .xadd(`${keyPrefix}audit`, '*', 'type', 'expired', 'event', JSON.stringify({ type: 'expired', stepId: 'old', approvalId: 'a', toolName: 't', at: 1 }))
      .exec();

    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    const audit = createRedisAuditLog({ redis, keyPrefix, logger: pino({ level: 'silent' }) });
    try {
      expect(await store.getStep(step.stepId)).toEqual(step);
      expect((await store.getThread(step.threadKey))?.messages).toEqual(thread.messages);
      expect(await store.dueSteps({ kind: 'expiry', now: Date.now(), limit: 10 })).toEqual([step.stepId]);
      expect(await store.busyThreads({ limit: 10 })).toEqual([step.threadKey]);
      expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 1 })).toEqual([step.threadKey]);
      expect((await store.listPendingSteps({ teamId: step.teamId, channel: step.channel, limit: 10 })).map((open) => open.stepId)).toEqual([step.stepId]);
      expect((await store.listGrants({ teamId: step.teamId, channel: step.channel })).map((grant) => grant.grantId)).toEqual(['g1']);
      // The holder from before the upgrade still holds the thread, with its token.
      expect(await store.tryLock(step.threadKey, HOUR)).toBeUndefined();
      const fence = { threadKey: step.threadKey, token: legacyToken };
      expect(await store.fenceState(fence)).toBe('current');
      expect(await store.takeWork(fence)).toBe('queued-item');

      const click = applyCallAction(step, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UBOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now: Date.now(), groupMembers: new Map(), newGrantId: randomUUID });
      if (!click.ok) throw new Error('the click is allowed');
      expect(await store.commitStep(click.transition)).toEqual({ result: 'committed' });
      expect(await store.commitStep(click.transition)).toEqual({ result: 'conflict' });
      const types = (await audit.read({ sinceMs: 0 })).map((event) => event.type);
      expect(types).toEqual(['expired', 'decision']);
      expect(await redis.exists(`${keyPrefix}step:${step.stepId}`, `${keyPrefix}expiries`, `${keyPrefix}busy-threads`, `${keyPrefix}thread:${step.threadKey}`)).toBe(0);
      // Done once: later starts skip the scan.
      expect(await redis.get(`${keyPrefix}layout`)).toBe('2');
    } finally {
      await store.close();
    }
  });

  it('leaves a key it cannot move where it is and still starts, trying again at the next start', async () => {
    const keyPrefix = `legacy-${randomUUID()}:`;
    const step = makeStep(['apv-1'], { stepId: randomUUID().replaceAll('-', '') });
    // A schedule that is not a sorted set (written by hand) next to a step that is fine.
    await redis.multi().set(`${keyPrefix}expiries`, 'not a sorted set').hset(`${keyPrefix}step:${step.stepId}`, 'data', stepData(step), 'revision', '0', 'phase', 'pending').exec();
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    try {
      expect(await store.getStep(step.stepId)).toEqual(step);
      expect(await redis.get(`${keyPrefix}expiries`)).toBe('not a sorted set');
      expect(await redis.exists(`${keyPrefix}layout`)).toBe(0);
    } finally {
      await store.close();
    }
  });
});
