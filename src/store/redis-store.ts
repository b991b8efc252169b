import { Redis } from 'ioredis';
import type { AuditEventInput } from '../audit/audit-event.js';
import { auditStreamKey, DEFAULT_AUDIT_MAX_LENGTH, logAuditEvent, type AuditLogger } from '../audit/audit-log.js';
import { prepareAuditEvent } from '../audit/prepare-audit-event.js';
import type { Grant } from '../approvals/grant.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { FencedError } from './fenced-error.js';
import { reportingCommandFailures, type RedisFailureListener } from './redis-failures.js';
import { reconnectDelayMs } from './reconnect-delay.js';
import {
  COMMIT_STEP_SCRIPT,
  CREATE_STEP_SCRIPT,
  CREATE_THREAD_IF_ABSENT_SCRIPT,
  READ_THREAD_SCRIPT,
  ENQUEUE_AND_LOCK_SCRIPT,
  HAND_OFF_WORK_SCRIPT,
  EXTEND_LOCK_SCRIPT,
  FINISH_EXECUTING_SCRIPT,
  FINISH_WORK_SCRIPT,
  MARK_EXECUTING_SCRIPT,
  RELEASE_IF_IDLE_SCRIPT,
  REVOKE_GRANT_SCRIPT,
  SAVE_THREAD_SCRIPT,
  TAKE_WORK_SCRIPT,
  TRY_LOCK_SCRIPT,
  SET_STEP_FIELD_SCRIPT,
} from './redis-scripts.js';
import type { CommitResult, ExecutingMarker, ScheduleKind, StateStore } from './state-store.js';
import { createThreadHistories, type ThreadReply } from './redis-thread-history.js';
import { CARD_LINK_FIELD, copyField, stepData, stepFromRecord } from './step-record.js';

/** Work queued for a thread outlives a crashed holder for this long, then Redis drops it. */
const QUEUE_TTL_MS = 24 * 60 * 60 * 1000;
/** A thread's newest fencing token is kept this long after its last lock; tokens only grow anyway. */
const FENCE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

const SCRIPTS = {
  csCommitStep: [9, COMMIT_STEP_SCRIPT],
  csCreateStep: [10, CREATE_STEP_SCRIPT],
  csSaveThread: [4, SAVE_THREAD_SCRIPT],
  csCreateThreadIfAbsent: [2, CREATE_THREAD_IF_ABSENT_SCRIPT],
  csReadThread: [2, READ_THREAD_SCRIPT],
  csMarkExecuting: [3, MARK_EXECUTING_SCRIPT],
  csFinishExecuting: [2, FINISH_EXECUTING_SCRIPT],
  csRevokeGrant: [2, REVOKE_GRANT_SCRIPT],
  csEnqueueAndLock: [4, ENQUEUE_AND_LOCK_SCRIPT],
  csHandOffWork: [4, HAND_OFF_WORK_SCRIPT],
  csTryLock: [2, TRY_LOCK_SCRIPT],
  csExtendLock: [2, EXTEND_LOCK_SCRIPT],
  csTakeWork: [3, TAKE_WORK_SCRIPT],
  csFinishWork: [5, FINISH_WORK_SCRIPT],
  csReleaseIfIdle: [5, RELEASE_IF_IDLE_SCRIPT],
  csSetStepField: [1, SET_STEP_FIELD_SCRIPT],
} as const;

type ScriptRunner = Record<keyof typeof SCRIPTS, (...args: Array<string | number>) => Promise<unknown>>;

/** The sorted sets of due times, one per kind, each scored by epoch milliseconds and holding step ids. */
const SCHEDULE_KEYS: Record<ScheduleKind, string> = { expiry: 'expiries', reminder: 'reminders', escalation: 'escalations' };

/** Hints beyond this many are dropped (oldest first) when no worker takes them; the recovery sweep still finds the work. */
const READY_HINTS_KEPT = 10_000;

export interface RedisStoreOptions {
  /** A client to use (and close with the store); or `url` to connect one. */
  redis?: Redis;
  url?: string;
  /** Namespace for every key, so several bots (or tests) can share one Redis. */
  keyPrefix?: string;
  /** Where audit events written with state changes also go as log lines. */
  auditLogger?: AuditLogger;
  auditMaxLength?: number;
  now?: () => number;
  /** Told of connection errors and failed store operations (see `RedisFailureListener`). */
  onRedisError?: RedisFailureListener;
}

export function createRedisStore({
  redis: given,
  url,
  keyPrefix = 'countersign:',
  auditLogger,
  auditMaxLength = DEFAULT_AUDIT_MAX_LENGTH,
  now = Date.now,
  onRedisError,
}: RedisStoreOptions): StateStore {
  const redis = given ?? connect(url);
  const reportConnectionError = (error: unknown) => {
    if (!closed) onRedisError?.({ kind: 'connection', error });
  };
  if (onRedisError) redis.on('error', reportConnectionError);
  for (const [name, [numberOfKeys, lua]] of Object.entries(SCRIPTS)) redis.defineCommand(name, { numberOfKeys, lua });
  const run = redis as unknown as ScriptRunner;
  let blocking: Redis | undefined;
  let closed = false;
  const histories = createThreadHistories();

  const key = {
    once: (id: string) => `${keyPrefix}once:${id}`,
    thread: (threadKey: string) => `${keyPrefix}thread:${threadKey}`,
    messages: (threadKey: string) => `${keyPrefix}thread-messages:${threadKey}`,
    step: (stepId: string) => `${keyPrefix}step:${stepId}`,
    queue: (threadKey: string) => `${keyPrefix}queue:${threadKey}`,
    lock: (threadKey: string) => `${keyPrefix}lock:${threadKey}`,
    fence: (threadKey: string) => `${keyPrefix}fence:${threadKey}`,
    inflight: (threadKey: string) => `${keyPrefix}inflight:${threadKey}`,
    busy: () => `${keyPrefix}busy-threads`,
    ready: () => `${keyPrefix}ready-threads`,
    complete: () => `${keyPrefix}complete-steps`,
    executing: (threadKey: string) => `${keyPrefix}executing:${threadKey}`,
    schedule: (kind: ScheduleKind) => `${keyPrefix}${SCHEDULE_KEYS[kind]}`,
    pending: (teamId: string, channel: string) => `${keyPrefix}pending:${teamId}:${channel}`,
    grants: (teamId: string, channel: string) => `${keyPrefix}grants:${teamId}:${channel}`,
    // Workspace-wide indexes (App Home, the pending gauge): one key per workspace, named only here so
    // they can be sharded (or hash-tagged) later without touching the scripts.
    openSteps: (teamId: string) => `${keyPrefix}open-steps:${teamId}`,
    openStepTeams: () => `${keyPrefix}open-step-teams`,
    grantChannels: (teamId: string) => `${keyPrefix}grant-channels:${teamId}`,
    audit: () => auditStreamKey(keyPrefix),
  };

  /** Audit events as the scripts append them: prepared (stamped, redacted) once, here. */
  const prepare = (events: readonly AuditEventInput[]) => {
    const prepared = events.map((event) => prepareAuditEvent(event, now));
    return { prepared, args: prepared.flatMap((event) => [event.type, JSON.stringify(event)]) };
  };
  const logStored = (prepared: readonly object[]) => {
    if (auditLogger) for (const event of prepared) logAuditEvent(auditLogger, event, true);
  };

  const store: StateStore = {
    kind: 'redis',

    async claimOnce(keys, ttlMs) {
      const pipeline = redis.pipeline();
      for (const id of keys) pipeline.set(key.once(id), '1', 'PX', ttlMs, 'NX');
      const results = (await pipeline.exec()) ?? [];
      for (const [error] of results) if (error) throw error;
      return results.every(([, value]) => value === 'OK');
    },

    async getThread(threadKey) {
      return histories.read(threadKey, (await run.csReadThread(key.thread(threadKey), key.messages(threadKey))) as ThreadReply);
    },

    async saveThread(thread, ttlMs, fence, { settled = false } = {}) {
      const reply = await histories.write(thread, (write) =>
        run.csSaveThread(key.thread(thread.threadKey), key.fence(fence.threadKey), key.executing(thread.threadKey), key.messages(thread.threadKey), fence.token, write.metaJson, ttlMs, settled ? '1' : '0', write.historyJson),
      );
      if (reply === 'fenced') throw new FencedError(fence.threadKey);
    },

    async createThreadIfAbsent(thread, ttlMs) {
      const reply = await histories.write(thread, (write) =>
        run.csCreateThreadIfAbsent(key.thread(thread.threadKey), key.messages(thread.threadKey), write.metaJson, ttlMs, write.historyJson), { rewrite: true },
      );
      return reply !== 0;
    },

    async createStep({ step, thread, ttlMs, audit, fence }) {
      const { prepared, args } = prepare(audit);
      const reply = await histories.write(thread, (write) =>
        run.csCreateStep(
          key.step(step.stepId),
          key.thread(thread.threadKey),
          key.schedule('expiry'),
          key.schedule('reminder'),
          key.pending(step.teamId, step.channel),
          key.audit(),
          key.fence(fence.threadKey),
          key.messages(thread.threadKey),
          key.openSteps(step.teamId),
          key.openStepTeams(),
          fence.token,
          stepData(step),
          ttlMs,
          step.stepId,
          step.expiresAt ?? '',
          step.remindAt ?? '',
          step.createdAt,
          write.metaJson,
          ttlMs,
          auditMaxLength,
          write.historyJson,
          step.teamId,
          ...args,
        ),
      );
      if (reply === 'fenced') throw new FencedError(fence.threadKey);
      logStored(prepared);
      if (step.escalation?.nextAt !== undefined) await redis.zadd(key.schedule('escalation'), step.escalation.nextAt, step.stepId);
    },

    async getStep(stepId) {
      return stepFromRecord(await redis.hgetall(key.step(stepId)));
    },

    async setStepCard(stepId, cardTs, link) {
      await redis.hset(key.step(stepId), 'card', cardTs);
      if (link !== undefined) await run.csSetStepField(key.step(stepId), CARD_LINK_FIELD, link);
    },

    async recordCardCopy(stepId, copy) {
      await run.csSetStepField(key.step(stepId), copyField(copy), JSON.stringify(copy));
    },

    async commitStep(transition): Promise<CommitResult> {
      const { step, grant, fence } = transition;
      const { prepared, args } = prepare(transition.audit);
      const flags = `${transition.completed ? 'c' : ''}${transition.resumed ? 'r' : ''}${transition.closed ? 'x' : ''}`;
      const reply = (await run.csCommitStep(
        key.step(step.stepId),
        key.complete(),
        key.schedule('expiry'),
        key.schedule('reminder'),
        key.audit(),
        key.grants(step.teamId, step.channel),
        key.fence(fence?.threadKey ?? step.threadKey),
        key.openSteps(step.teamId),
        key.grantChannels(step.teamId),
        transition.fromRevision,
        stepData(step),
        step.stepId,
        now(),
        flags,
        fence?.token ?? '',
        grant?.grantId ?? '',
        grant ? JSON.stringify(grant) : '',
        grant?.expiresAt ?? 0,
        auditMaxLength,
        step.phase,
        step.channel,
        ...args,
      )) as CommitResult;
      if (reply === 'committed') logStored(prepared);
      return reply;
    },

    async dueSteps({ kind, now: at, limit }) {
      return redis.zrangebyscore(key.schedule(kind), '-inf', at, 'LIMIT', 0, limit);
    },

    async unschedule(stepId) {
      await redis.multi().zrem(key.schedule('expiry'), stepId).zrem(key.schedule('reminder'), stepId).zrem(key.schedule('escalation'), stepId).exec();
    },

    async scheduleEscalation(stepId, at) {
      if (at === undefined) await redis.zrem(key.schedule('escalation'), stepId);
      else await redis.zadd(key.schedule('escalation'), at, stepId);
    },

    async claimReminder(stepId) {
      return (await redis.zrem(key.schedule('reminder'), stepId)) === 1;
    },

    async completedSteps({ before, limit }) {
      return redis.zrangebyscore(key.complete(), '-inf', before, 'LIMIT', 0, limit);
    },

    async listPendingSteps({ teamId, channel, limit }) {
      const index = key.pending(teamId, channel);
      const open = [];
      for (const stepId of await redis.zrevrange(index, 0, limit * 4)) {
        const step = stepFromRecord(await redis.hgetall(key.step(stepId)));
        if (step?.phase === 'pending') open.push(step);
        else await redis.zrem(index, stepId);
        if (open.length >= limit) break;
      }
      return open;
    },

    async listOpenSteps({ teamId, limit }) {
      const index = key.openSteps(teamId);
      // Closing takes a step off in the same script, so the index holds open steps and those whose
      // record expired (dropped here): one round trip reads them all.
      const stepIds = await redis.zrevrange(index, 0, limit - 1);
      const pipeline = redis.pipeline();
      for (const stepId of stepIds) pipeline.hgetall(key.step(stepId));
      const replies = (await pipeline.exec()) ?? [];
      const open: PendingStep[] = [];
      const gone: string[] = [];
      for (const [position, [error, fields]] of replies.entries()) {
        if (error) throw error;
        const step = stepFromRecord(fields as Record<string, string>);
        if (step?.phase === 'pending') open.push(step);
        else if (!step) gone.push(stepIds[position]!);
      }
      if (gone.length > 0) await redis.zrem(index, ...gone);
      return open;
    },

    async teamsWithOpenSteps() {
      return redis.smembers(key.openStepTeams());
    },

    async listTeamGrants({ teamId, now: at }) {
      const live: Grant[] = [];
      for (const channel of await redis.smembers(key.grantChannels(teamId))) live.push(...(await this.listGrants({ teamId, channel, now: at })));
      return live.sort((left, right) => left.createdAt - right.createdAt);
    },

    async listGrants({ teamId, channel, now: at }) {
      const grants = key.grants(teamId, channel);
      const live: Grant[] = [];
      for (const [grantId, json] of Object.entries(await redis.hgetall(grants))) {
        const grant = JSON.parse(json) as Grant;
        if (grant.expiresAt > at) live.push(grant);
        else await redis.hdel(grants, grantId);
      }
      return live.sort((left, right) => left.createdAt - right.createdAt);
    },

    async revokeGrant({ teamId, channel, grantId, audit }) {
      const grants = key.grants(teamId, channel);
      const json = await redis.hget(grants, grantId);
      if (json === null) return undefined;
      const grant = JSON.parse(json) as Grant;
      const { prepared, args } = prepare([audit(grant)]);
      if ((await run.csRevokeGrant(grants, key.audit(), grantId, json, auditMaxLength, ...args)) !== 1) return undefined;
      logStored(prepared);
      return grant;
    },

    async enqueueWork(threadKey, item, lockTtlMs) {
      const token = await run.csEnqueueAndLock(key.queue(threadKey), key.lock(threadKey), key.busy(), key.fence(threadKey), item, lockTtlMs, QUEUE_TTL_MS, threadKey, now(), FENCE_TTL_MS);
      return typeof token === 'string' ? token : undefined;
    },

    async handOffWork(threadKey, item) {
      await run.csHandOffWork(key.queue(threadKey), key.lock(threadKey), key.busy(), key.ready(), item, QUEUE_TTL_MS, threadKey, now(), READY_HINTS_KEPT);
    },

    async nextReadyThread(timeoutMs) {
      if (closed) return undefined;
      // A blocking pop holds its connection until it answers, so it gets one of its own.
      blocking ??= redis.duplicate().on('error', reportConnectionError);
      const reply = await blocking.blpop(key.ready(), Math.max(0.01, timeoutMs / 1000));
      return reply?.[1];
    },

    async tryLock(threadKey, ttlMs) {
      const token = await run.csTryLock(key.lock(threadKey), key.fence(threadKey), ttlMs, now(), FENCE_TTL_MS);
      return typeof token === 'string' ? token : undefined;
    },

    async takeWork(fence) {
      const [status, item] = (await run.csTakeWork(key.queue(fence.threadKey), key.inflight(fence.threadKey), key.fence(fence.threadKey), fence.token, QUEUE_TTL_MS)) as [string, string?];
      if (status === 'fenced') throw new FencedError(fence.threadKey);
      return item;
    },

    async takeLeftover(threadKey) {
      return (await redis.lindex(key.inflight(threadKey), 0)) ?? undefined;
    },

    async finishWork(fence, finished, lockTtlMs) {
      const { threadKey } = fence;
      const [status, item] = (await run.csFinishWork(key.queue(threadKey), key.lock(threadKey), key.inflight(threadKey), key.busy(), key.fence(threadKey), fence.token, finished, lockTtlMs, threadKey, QUEUE_TTL_MS)) as [string, string?];
      if (status === 'fenced') throw new FencedError(threadKey);
      return item;
    },

    async busyThreads({ limit }) {
      return redis.zrange(key.busy(), '0', String(limit - 1));
    },

    async extendLock(fence, ttlMs) {
      return (await run.csExtendLock(key.lock(fence.threadKey), key.fence(fence.threadKey), fence.token, ttlMs)) === 1;
    },

    async isCurrent(fence) {
      return (await redis.get(key.fence(fence.threadKey))) === fence.token;
    },

    async releaseLockIfIdle(fence, lockTtlMs) {
      return (await run.csReleaseIfIdle(
        key.queue(fence.threadKey),
        key.lock(fence.threadKey),
        key.inflight(fence.threadKey),
        key.busy(),
        key.fence(fence.threadKey),
        fence.token,
        lockTtlMs,
        fence.threadKey,
      )) as 'more' | 'released' | 'fenced';
    },

    async markExecuting({ fence, toolCallId, marker, ttlMs, audit }) {
      const { prepared, args } = prepare(audit);
      const reply = await run.csMarkExecuting(key.executing(fence.threadKey), key.fence(fence.threadKey), key.audit(), fence.token, toolCallId, JSON.stringify(marker), ttlMs, auditMaxLength, ...args);
      if (reply === 'fenced') throw new FencedError(fence.threadKey);
      logStored(prepared);
    },

    async finishExecuting({ threadKey, toolCallId, marker, audit }) {
      const { prepared, args } = prepare([audit]);
      await run.csFinishExecuting(key.executing(threadKey), key.audit(), toolCallId, JSON.stringify(marker), auditMaxLength, ...args);
      logStored(prepared);
    },

    async executingCalls(threadKey) {
      const markers = new Map<string, ExecutingMarker>();
      for (const [toolCallId, json] of Object.entries(await redis.hgetall(key.executing(threadKey)))) {
        markers.set(toolCallId, parseMarker(json));
      }
      return markers;
    },

    async ping() {
      await redis.ping();
    },

    async close() {
      closed = true;
      blocking?.disconnect();
      redis.disconnect();
    },
  };
  return onRedisError ? reportingCommandFailures(store, { onFailure: onRedisError, active: () => !closed }) : store;
}

function connect(url: string | undefined): Redis {
  if (url === undefined) throw new TypeError('createRedisStore needs a `redis` client or a `url`');
  const redis = new Redis(url, {
    // Fail fast instead of queueing commands forever: a click must hear "could not record" promptly.
    maxRetriesPerRequest: 2,
    retryStrategy: reconnectDelayMs,
    connectTimeout: 5_000,
    lazyConnect: false,
  });
  // ioredis emits connection errors as events; without a listener Node would crash the process.
  redis.on('error', () => {});
  return redis;
}

/** Markers written before they carried the call (a bare time) still say "it may have run". */
function parseMarker(json: string): ExecutingMarker {
  try {
    const parsed = JSON.parse(json) as unknown;
    if (parsed && typeof parsed === 'object' && 'toolName' in parsed) return parsed as ExecutingMarker;
  } catch {
    // fall through
  }
  return { toolName: 'unknown', input: null, startedAt: Number(json) || 0 };
}
