import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Grant } from '../approvals/grant.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import { reconnectDelayMs } from './reconnect-delay.js';
import {
  CLAIM_RESUME_SCRIPT,
  DECIDE_SCRIPT,
  ENQUEUE_AND_LOCK_SCRIPT,
  EXTEND_LOCK_SCRIPT,
  RELEASE_IF_IDLE_SCRIPT,
  EXPIRE_SCRIPT,
  SUPERSEDE_SCRIPT,
} from './redis-scripts.js';
import type { DecideResult, StateStore } from './state-store.js';
import { stepFromHashFields, stepToHashFields } from './step-hash.js';
import type { ThreadState } from './thread-state.js';
import { THREAD_STATE_SCHEMA_VERSION } from './thread-state.js';

/** Work queued for a thread outlives a crashed holder for this long, then Redis drops it. */
const QUEUE_TTL_MS = 24 * 60 * 60 * 1000;

type ScriptName = 'csDecide' | 'csClaimResume' | 'csSupersede' | 'csExpire' | 'csEnqueueAndLock' | 'csExtendLock' | 'csReleaseIfIdle';
type ScriptRunner = Record<ScriptName, (...args: Array<string | number>) => Promise<unknown>>;

export interface RedisStoreOptions {
  url: string;
  /** Namespace for every key, so several bots (or tests) can share one Redis. */
  keyPrefix?: string;
}

export function createRedisStore({ url, keyPrefix = 'countersign:' }: RedisStoreOptions): StateStore {
  const redis = new Redis(url, {
    // Fail fast instead of queueing commands forever: a click must hear "could not record" promptly.
    maxRetriesPerRequest: 2,
    retryStrategy: reconnectDelayMs,
    connectTimeout: 5_000,
    lazyConnect: false,
  });
  // ioredis emits connection errors as events; without a listener Node would crash the process.
  redis.on('error', () => {});
  const scripts: Array<[ScriptName, number, string]> = [
    ['csDecide', 2, DECIDE_SCRIPT],
    ['csClaimResume', 2, CLAIM_RESUME_SCRIPT],
    ['csSupersede', 1, SUPERSEDE_SCRIPT],
    ['csExpire', 3, EXPIRE_SCRIPT],
    ['csEnqueueAndLock', 3, ENQUEUE_AND_LOCK_SCRIPT],
    ['csExtendLock', 1, EXTEND_LOCK_SCRIPT],
    ['csReleaseIfIdle', 4, RELEASE_IF_IDLE_SCRIPT],
  ];
  for (const [name, numberOfKeys, lua] of scripts) redis.defineCommand(name, { numberOfKeys, lua });
  const run = redis as unknown as ScriptRunner;

  const key = {
    once: (id: string) => `${keyPrefix}once:${id}`,
    thread: (threadKey: string) => `${keyPrefix}thread:${threadKey}`,
    step: (stepId: string) => `${keyPrefix}step:${stepId}`,
    queue: (threadKey: string) => `${keyPrefix}queue:${threadKey}`,
    lock: (threadKey: string) => `${keyPrefix}lock:${threadKey}`,
    inflight: (threadKey: string) => `${keyPrefix}inflight:${threadKey}`,
    busy: () => `${keyPrefix}busy-threads`,
    complete: () => `${keyPrefix}complete-steps`,
    executing: (threadKey: string) => `${keyPrefix}executing:${threadKey}`,
    schedule: (kind: 'expiry' | 'reminder') => `${keyPrefix}${kind === 'expiry' ? 'expiries' : 'reminders'}`,
    pending: (teamId: string, channel: string) => `${keyPrefix}pending:${teamId}:${channel}`,
    grants: (teamId: string, channel: string) => `${keyPrefix}grants:${teamId}:${channel}`,
  };

  const stepFrom = (reply: unknown): PendingStep | undefined =>
    Array.isArray(reply) ? stepFromHashFields(reply as string[]) : undefined;

  return {
    kind: 'redis',

    async claimOnce(keys, ttlMs) {
      const pipeline = redis.pipeline();
      for (const id of keys) pipeline.set(key.once(id), '1', 'PX', ttlMs, 'NX');
      const results = (await pipeline.exec()) ?? [];
      for (const [error] of results) if (error) throw error;
      return results.every(([, value]) => value === 'OK');
    },

    async getThread(threadKey) {
      const json = await redis.get(key.thread(threadKey));
      if (json === null) return undefined;
      const thread = JSON.parse(json) as ThreadState;
      return thread.schemaVersion === THREAD_STATE_SCHEMA_VERSION ? thread : undefined;
    },

    async saveThread(thread, ttlMs) {
      await redis.set(key.thread(thread.threadKey), JSON.stringify(thread), 'PX', ttlMs);
    },

    async createThreadIfAbsent(thread, ttlMs) {
      return (await redis.set(key.thread(thread.threadKey), JSON.stringify(thread), 'PX', ttlMs, 'NX')) === 'OK';
    },

    async createStep(step, ttlMs) {
      const transaction = redis.multi().hset(key.step(step.stepId), stepToHashFields(step)).pexpire(key.step(step.stepId), ttlMs);
      if (step.expiresAt !== undefined) transaction.zadd(key.schedule('expiry'), step.expiresAt, step.stepId);
      if (step.remindAt !== undefined) transaction.zadd(key.schedule('reminder'), step.remindAt, step.stepId);
      transaction.zadd(key.pending(step.teamId, step.channel), step.createdAt, step.stepId).pexpire(key.pending(step.teamId, step.channel), ttlMs);
      await transaction.exec();
    },

    async getStep(stepId) {
      const fields = await redis.hgetall(key.step(stepId));
      return stepFromHashFields(fields);
    },

    async setStepCard(stepId, cardTs) {
      await redis.hset(key.step(stepId), 'card', cardTs);
    },

    async decide({ stepId, approvalId, decision, required = 1 }): Promise<DecideResult> {
      const reply = (await run.csDecide(
        key.step(stepId),
        key.complete(),
        approvalId,
        JSON.stringify(decision),
        required,
        decision.outcome,
        decision.userId,
        decision.at,
        stepId,
      )) as [
        string,
        string?,
        string[]?,
      ];
      const [status, completed, fields] = reply;
      const step = fields ? stepFromHashFields(fields) : undefined;
      if (status === 'not-found' || !step) return { status: 'not-found' };
      if (status === 'already-decided') return { status, step, decision: step.decisions[approvalId] as Decision };
      if (status === 'closed' || status === 'partial' || status === 'already-approved-by-you') return { status, step };
      return { status: 'recorded', step, completedStep: completed === '1' };
    },

    async claimResume(stepId) {
      return stepFrom(await run.csClaimResume(key.step(stepId), key.complete(), stepId));
    },

    async supersede(stepId, decision) {
      return stepFrom(await run.csSupersede(key.step(stepId), JSON.stringify(decision)));
    },

    async dueSteps({ kind, now, limit }) {
      return redis.zrangebyscore(key.schedule(kind), '-inf', now, 'LIMIT', 0, limit);
    },

    async expireStep(stepId, decision) {
      return stepFrom(await run.csExpire(key.step(stepId), key.schedule('expiry'), key.complete(), JSON.stringify(decision), stepId, decision.at));
    },

    async claimReminder(stepId) {
      return (await redis.zrem(key.schedule('reminder'), stepId)) === 1;
    },

    async listPendingSteps({ teamId, channel, limit }) {
      const index = key.pending(teamId, channel);
      const open: PendingStep[] = [];
      for (const stepId of await redis.zrevrange(index, 0, limit * 4)) {
        const step = stepFromHashFields(await redis.hgetall(key.step(stepId)));
        if (step?.phase === 'pending') open.push(step);
        else await redis.zrem(index, stepId);
        if (open.length >= limit) break;
      }
      return open;
    },

    async saveGrant(grant) {
      const grants = key.grants(grant.teamId, grant.channel);
      // The hash lives as long as its longest grant; GT never shortens it for a shorter one.
      await redis.multi().hset(grants, grant.grantId, JSON.stringify(grant)).pexpireat(grants, grant.expiresAt, 'GT').pexpireat(grants, grant.expiresAt, 'NX').exec();
    },

    async listGrants({ teamId, channel, now }) {
      const grants = key.grants(teamId, channel);
      const live: Grant[] = [];
      for (const [grantId, json] of Object.entries(await redis.hgetall(grants))) {
        const grant = JSON.parse(json) as Grant;
        if (grant.expiresAt > now) live.push(grant);
        else await redis.hdel(grants, grantId);
      }
      return live.sort((left, right) => left.createdAt - right.createdAt);
    },

    async revokeGrant({ teamId, channel, grantId }) {
      const grants = key.grants(teamId, channel);
      const results = (await redis.multi().hget(grants, grantId).hdel(grants, grantId).exec()) ?? [];
      const json = results[0]?.[1];
      const removed = results[1]?.[1];
      return removed === 1 && typeof json === 'string' ? (JSON.parse(json) as Grant) : undefined;
    },

    async enqueueWork(threadKey, item, lockTtlMs) {
      const token = randomUUID();
      const acquired = await run.csEnqueueAndLock(key.queue(threadKey), key.lock(threadKey), key.busy(), item, token, lockTtlMs, QUEUE_TTL_MS, threadKey, Date.now());
      return acquired === 1 ? token : undefined;
    },

    async takeWork(threadKey) {
      const item = await redis.lmove(key.queue(threadKey), key.inflight(threadKey), 'LEFT', 'RIGHT');
      if (item !== null) await redis.pexpire(key.inflight(threadKey), QUEUE_TTL_MS);
      return item ?? undefined;
    },

    async finishWork(threadKey) {
      await redis.lpop(key.inflight(threadKey));
    },

    async takeLeftover(threadKey) {
      return (await redis.lindex(key.inflight(threadKey), 0)) ?? undefined;
    },

    async busyThreads({ limit }) {
      return redis.zrange(key.busy(), '0', String(limit - 1));
    },

    async tryLock(threadKey, ttlMs) {
      const token = randomUUID();
      return (await redis.set(key.lock(threadKey), token, 'PX', ttlMs, 'NX')) === 'OK' ? token : undefined;
    },

    async completedSteps({ before, limit }) {
      return redis.zrangebyscore(key.complete(), '-inf', before, 'LIMIT', 0, limit);
    },

    async markExecuting(threadKey, toolCallId, ttlMs) {
      await redis.multi().hset(key.executing(threadKey), toolCallId, String(Date.now())).pexpire(key.executing(threadKey), ttlMs).exec();
    },

    async executingCalls(threadKey) {
      return new Set(await redis.hkeys(key.executing(threadKey)));
    },

    async extendLock(threadKey, token, ttlMs) {
      return (await run.csExtendLock(key.lock(threadKey), token, ttlMs)) === 1;
    },

    async releaseLockIfIdle(threadKey, token, lockTtlMs) {
      return (await run.csReleaseIfIdle(key.queue(threadKey), key.lock(threadKey), key.inflight(threadKey), key.busy(), token, lockTtlMs, threadKey)) === 1;
    },

    async ping() {
      await redis.ping();
    },

    async close() {
      redis.disconnect();
    },
  };
}
