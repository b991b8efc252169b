import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { AuditEventInput } from '../audit/audit-event.js';
import { DEFAULT_AUDIT_MAX_LENGTH, logAuditEvent, type AuditLogger } from '../audit/audit-log.js';
import { prepareAuditEvent } from '../audit/prepare-audit-event.js';
import type { Grant } from '../approvals/grant.js';
import type { CardCopy, PendingStep } from '../approvals/pending-step.js';
import { stampGrant } from '../approvals/transitions/stamp-grant.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { FencedError } from './fenced-error.js';
import { NEWER_SCHEMA, unlessNewerSchema } from './newer-schema-error.js';
import { newTokenNonce } from './fencing-token.js';
import { reportingCommandFailures, type RedisFailureListener } from './redis-failures.js';
import type { RedisTarget } from '../config/redis-target.js';
import { readMasterPersistence, unreadMasterRisks } from './cluster-master-persistence.js';
import { connectRedisClient } from './connect-to-redis.js';
import { prepareKeyLayout } from './key-layout.js';
import { createRedisKeys, DEFAULT_REDIS_SHARDS, stepIdPrefix, type ShardKeys } from './redis-keys.js';
import { createReadyWaiter } from './redis-ready-waiter.js';
import {
  COMMIT_STEP_SCRIPT,
  COMMIT_STEP_AND_QUEUE_SCRIPT,
  CREATE_STEP_SCRIPT,
  CREATE_THREAD_IF_ABSENT_SCRIPT,
  READ_THREAD_SCRIPT,
  ENQUEUE_AND_LOCK_SCRIPT,
  LOCK_AND_TAKE_SCRIPT,
  CLAIM_STEP_WITH_THREAD_SCRIPT,
  HAND_OFF_WORK_SCRIPT,
  EXTEND_LOCK_SCRIPT,
  FINISH_EXECUTING_SCRIPT,
  FINISH_WORK_SCRIPT,
  MARK_EXECUTING_SCRIPT,
  RELEASE_IF_IDLE_SCRIPT,
  STALLED_THREADS_SCRIPT,
  UNMARK_EXECUTING_SCRIPT,
  REVOKE_GRANT_SCRIPT,
  LIST_GRANTS_SCRIPT,
  STORE_CLOCK_SCRIPT,
  SAVE_THREAD_SCRIPT,
  TAKE_WORK_SCRIPT,
  TRY_LOCK_SCRIPT,
  SET_STEP_CARD_SCRIPT,
  REPLACE_STEP_CARD_SCRIPT,
  RECORD_CARD_COPY_SCRIPT,
  CLAIM_KEPT_SCRIPT,
  CLAIM_ONCE_SCRIPT,
  CLAIM_REMINDER_SCRIPT,
  FINISH_REMINDER_SCRIPT,
  KEEP_REMINDER_SCRIPT,
  RELEASE_REMINDER_SCRIPT,
} from './redis-scripts.js';
import type { CommitResult, DeletedPost, ExecutingMarker, Fence, PendingCardRefresh, PendingTakeBack, ReplicaShortfall, StateStore } from './state-store.js';
import { createReplicaConfirmedWrites, defaultReplicasToWaitFor, DEFAULT_REPLICA_WAIT_TIMEOUT_MS, DISK_WAIT_FLOOR_MS } from './replica-confirmed-write.js';
import { combinePersistence, persistenceRisks, readRedisPersistence } from './redis-persistence.js';
import { ReplicationNotConfirmedError } from './replication-not-confirmed-error.js';
import { createThreadHistories, type ThreadReply, type ThreadWrite } from './redis-thread-history.js';
import { assertTakesWrites } from './redis-takes-writes.js';
import { createWriteProbe } from './redis-write-probe.js';
import { createSharedHealthProbe } from './shared-health-probe.js';
import { parseTakeBackRecord, takeBackRecord } from './take-back-record.js';
import { cardRefreshRecord, parseCardRefreshRecord } from './card-refresh-record.js';
import { createRedisKeptSchedule } from './redis-kept-schedule.js';
import { keptScheduleMethods } from './kept-schedule.js';
import type { ThreadState } from './thread-state.js';
import { notSent } from './write-not-run.js';
import { copyField, stepData, stepFromRecord } from './step-record.js';

/** Work queued for a thread outlives a crashed holder for this long, then Redis drops it. */
const QUEUE_TTL_MS = 24 * 60 * 60 * 1000;
/** A thread's newest fencing token is kept this long after its last lock; tokens only grow anyway. */
const FENCE_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * How long a step commit, a write that may take a thread's lock, or a named save (`NamedWrite`) is
 * remembered for a resend of it: ioredis sends a command whose reply was lost again within seconds
 * of reconnecting, or fails it.
 */
const ATTEMPT_TTL_MS = 5 * 60 * 1000;

const SCRIPTS = {
  csCommitStep: [11, COMMIT_STEP_SCRIPT],
  csCommitStepAndQueue: [16, COMMIT_STEP_AND_QUEUE_SCRIPT],
  csCreateStep: [12, CREATE_STEP_SCRIPT],
  csSaveThread: [6, SAVE_THREAD_SCRIPT],
  csCreateThreadIfAbsent: [2, CREATE_THREAD_IF_ABSENT_SCRIPT],
  csReadThread: [2, READ_THREAD_SCRIPT],
  csMarkExecuting: [5, MARK_EXECUTING_SCRIPT],
  csFinishExecuting: [3, FINISH_EXECUTING_SCRIPT],
  csUnmarkExecuting: [3, UNMARK_EXECUTING_SCRIPT],
  csRevokeGrant: [2, REVOKE_GRANT_SCRIPT],
  csListGrants: [1, LIST_GRANTS_SCRIPT],
  csStoreClock: [1, STORE_CLOCK_SCRIPT],
  csEnqueueAndLock: [6, ENQUEUE_AND_LOCK_SCRIPT],
  csClaimStepWithThread: [8, CLAIM_STEP_WITH_THREAD_SCRIPT],
  csHandOffWork: [5, HAND_OFF_WORK_SCRIPT],
  csTryLock: [2, TRY_LOCK_SCRIPT],
  csLockAndTake: [6, LOCK_AND_TAKE_SCRIPT],
  csExtendLock: [2, EXTEND_LOCK_SCRIPT],
  csTakeWork: [3, TAKE_WORK_SCRIPT],
  csFinishWork: [5, FINISH_WORK_SCRIPT],
  csReleaseIfIdle: [5, RELEASE_IF_IDLE_SCRIPT],
  csStalledThreads: [1, STALLED_THREADS_SCRIPT],
  csRecordCardCopy: [1, RECORD_CARD_COPY_SCRIPT],
  csSetStepCard: [1, SET_STEP_CARD_SCRIPT],
  csReplaceStepCard: [1, REPLACE_STEP_CARD_SCRIPT],
  csClaimOnce: [1, CLAIM_ONCE_SCRIPT],
  csClaimKept: [1, CLAIM_KEPT_SCRIPT],
  csClaimReminder: [2, CLAIM_REMINDER_SCRIPT],
  csKeepReminder: [1, KEEP_REMINDER_SCRIPT],
  csReleaseReminder: [1, RELEASE_REMINDER_SCRIPT],
  csFinishReminder: [2, FINISH_REMINDER_SCRIPT],
} as const;

type ScriptRunner = Record<keyof typeof SCRIPTS, (...args: Array<string | number>) => Promise<unknown>>;

/**
 * Entries of a shard's index of threads with work that one `stalledThreads` read looks at, at most:
 * the threads live holders are draining that it passes over, so one sweep's Redis time stays
 * bounded. Only more live turns than this in one shard, all older than a lost hand-off, would still
 * hide it (16,000 with the default 16 shards).
 */
const STALLED_THREADS_SCANNED = 1_000;

/** Hints beyond this many are dropped (oldest first) when no worker takes them; the recovery sweep still finds the work. */
const READY_HINTS_KEPT = 10_000;

export interface RedisStoreOptions {
  /** A client to use (and close with the store); or `url` / `target` to connect one. */
  redis?: Redis | Cluster;
  url?: string;
  /** A standalone, Sentinel or Cluster deployment (see `parseRedisTarget`); `url` is the standalone shorthand. */
  target?: RedisTarget;
  /** Namespace for every key, so several bots (or tests) can share one Redis. */
  keyPrefix?: string;
  /** Slot groups the keyspace is cut into (see `redis-keys.ts`); fixed for the life of the data. */
  shards?: number;
  /** Where audit events written with state changes also go as log lines. */
  auditLogger?: AuditLogger;
  auditMaxLength?: number;
  now?: () => number;
  /**
   * Stands in for the server's clock where the scripts judge a deadline (a decision's against the
   * step's expiry, a call's start against its grant's): for tests whose bots run on a fake clock.
   * Unset, as in production, Redis's `TIME` judges them, the one clock every replica shares.
   */
  serverClock?: () => number;
  /** Told of connection errors and failed store operations (see `RedisFailureListener`). */
  onRedisError?: RedisFailureListener;
  /**
   * Replicas that must have a call's executing marker before the call starts (never more than the
   * primary has connected): 0 starts it once the primary has it. Default: 1 behind Sentinel or in
   * a Cluster, else 0 (see `defaultReplicasToWaitFor`). Whatever the count, a primary with
   * `appendonly yes` and `WAITAOF` (Redis 7.2+) must also have it fsynced to its append-only file.
   */
  waitReplicas?: number;
  /** How long the marker waits for them; fewer in time and the call is not started. */
  waitTimeoutMs?: number;
  /**
   * How old a read of the primaries' settings `risks()` may answer with (default `RISKS_MAX_AGE_MS`):
   * `/healthz` follows a failover, or a replica that went away, within it, without a round trip per hit.
   */
  risksMaxAgeMs?: number;
  /** How long a health probe that succeeded answers the checks after it (default `HEALTH_PROBE_REUSE_MS`). */
  healthProbeReuseMs?: number;
}

/** See `RedisStoreOptions.risksMaxAgeMs`. */
const RISKS_MAX_AGE_MS = 60_000;

export function createRedisStore({
  redis: given,
  url,
  target,
  keyPrefix = 'countersign:',
  shards = DEFAULT_REDIS_SHARDS,
  auditLogger,
  auditMaxLength = DEFAULT_AUDIT_MAX_LENGTH,
  now = Date.now,
  serverClock,
  onRedisError,
  waitReplicas,
  waitTimeoutMs = DEFAULT_REPLICA_WAIT_TIMEOUT_MS,
  risksMaxAgeMs = RISKS_MAX_AGE_MS,
  healthProbeReuseMs,
}: RedisStoreOptions): StateStore {
  const redis = given ?? connectRedisClient(target ?? (url === undefined ? undefined : { kind: 'standalone', url }));
  let closed = false;
  const reportConnectionError = (error: unknown) => {
    if (!closed) onRedisError?.({ kind: 'connection', error });
  };
  if (onRedisError) redis.on('error', reportConnectionError);
  for (const [name, [numberOfKeys, lua]] of Object.entries(SCRIPTS)) redis.defineCommand(name, { numberOfKeys, lua });
  const run = redis as unknown as ScriptRunner;
  const keys = createRedisKeys({ keyPrefix, shards });
  const ready = createReadyWaiter({ redis, keys, onConnectionError: (error) => reportConnectionError(error) });
  const histories = createThreadHistories();
  const layout = prepareKeyLayout({ redis, keys, keyPrefix });
  const probeWrites = createWriteProbe({ redis, keys });
  // Shared by concurrent and rapid checks: `/healthz` is public, and the probe writes (shared-health-probe.ts).
  const health = createSharedHealthProbe(async () => {
    // PING and ROLE are answered by a Redis that refuses every write (full, too few replicas): /healthz must see
    // that, hence the write. Sent together, one round trip: after the bot's thread was busy, every reply is read
    // at once (health-check.ts yields once for them). The first failure in this order is the one told.
    const settled = await Promise.allSettled([redis.ping(), assertTakesWrites(redis), probeWrites()]);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }, { reuseForMs: healthProbeReuseMs });
  // A lost connection, like a failed call below, drops the kept success: the next check asks Redis.
  redis.on('close', () => health.forget());
  const replicas = waitReplicas ?? defaultReplicasToWaitFor(redis);
  // Its connection opens on the first write that waits: never, with no replica to wait for and no append-only file.
  const confirmedWrites = createReplicaConfirmedWrites({ redis, replicas, timeoutMs: waitTimeoutMs, onConnectionError: reportConnectionError });

  /**
   * What the primaries keep across a restart, read once (`redis-persistence.ts`), and again once
   * older than `maxAgeMs` (`risks()`: the replicas connected change with a failover). A failed read
   * is not remembered, and a wait Redis refused forgets it (AOF turned off since, a failover to an
   * older server), so the next write asks again.
   */
  const persistence = cachedRead(() => readRedisPersistence({ redis, keys }));
  const readPersistence = ({ maxAgeMs = Number.POSITIVE_INFINITY }: { maxAgeMs?: number } = {}) => persistence.get(maxAgeMs);
  const forgetPersistence = persistence.forget;
  /**
   * The settings of every master of a Cluster's slot map, for the warnings only (`risks()`), read apart
   * from `readPersistence`: the shards' waits never wait on a master holding no shard, nor fail with it.
   */
  const readMasters = cachedRead(() => readMasterPersistence({ redis, keys })).get;
  /**
   * Whether the writes that must not be lost (a call's executing marker, a withdrawal) also wait
   * until the primary has fsynced them to its append-only file: with `appendfsync everysec` (the
   * usual setting) an OS crash or power loss otherwise loses the last second of them. Redis 6 and
   * 7.0 have no WAITAOF: there the file is as fresh as its fsync policy makes it.
   */
  const waitsForDisk = async () => {
    const { appendOnly, waitAof } = await readPersistence();
    return appendOnly === true && waitAof;
  };

  /** What the scripts judge deadlines by in place of the server's `TIME` ('': `TIME` itself). */
  const clockArgument = () => (serverClock ? serverClock() : '');

  /**
   * The transition with its grant (if any) stamped by the clock of the shard that stores it
   * (`stampGrant`), read just before the write: the end the approver chose, by the clock every
   * replica's call start under it is judged by, never by the clock of the replica that took the click.
   * Once per `attempt` (STORE_CLOCK_SCRIPT keeps the first answer): a resend of the write (decide-call
   * sends it again after a failure) is not written again, and must log the end that was.
   */
  const withStoreStampedGrant = async (transition: StepTransition, attempt: string): Promise<StepTransition> => {
    const { step, grant } = transition;
    if (!grant) return transition;
    const stampKey = keys.ofChannel(step.teamId, step.channel).attempt(`grant-clock:${attempt}`);
    // Failing here, the write was never sent: decide-call then knows nothing was recorded.
    const clock = await run.csStoreClock(stampKey, clockArgument(), ATTEMPT_TTL_MS).catch(notSent);
    return stampGrant(transition, Number(clock));
  };

  /** COMMIT_STEP_SCRIPT's keys, then its arguments before the audit pairs. */
  const commitStepKeys = ({ step, fence }: StepTransition) => {
    const stepAt = keys.ofStep(step.stepId);
    const fencedThread = fence?.threadKey ?? step.threadKey;
    return [
      stepAt.step(step.stepId),
      stepAt.complete(),
      stepAt.schedule('expiry'),
      stepAt.schedule('reminder'),
      stepAt.audit(),
      keys.ofChannel(step.teamId, step.channel).grants(step.teamId, step.channel),
      keys.ofThread(fencedThread).fence(fencedThread),
      stepAt.openSteps(step.teamId),
      stepAt.grantChannels(step.teamId),
      stepAt.schedule('escalation'),
    ] as const;
  };
  const commitStepArguments = (transition: StepTransition) => {
    const { step, grant, fence } = transition;
    const flags = `${transition.completed ? 'c' : ''}${transition.resumed ? 'r' : ''}${transition.closed ? 'x' : ''}`;
    const expiry = transition.rescheduled?.expiry ? (step.expiresAt ?? '') : '';
    const reminder = transition.rescheduled?.reminder ? (step.remindAt ?? '') : '';
    const escalation = transition.rescheduled?.escalation ? (step.escalation?.nextAt ?? '') : '';
    const deadline = transition.deadline ?? '';
    return [
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
      expiry,
      reminder,
      escalation,
      deadline,
      deadline === '' ? '' : clockArgument(),
    ] as const;
  };

  /**
   * SAVE_THREAD_SCRIPT's keys and arguments; `audit`: prepared (type, json) pairs, appended to the
   * thread's shard's stream; `attempt`: the save's name, kept `attemptTtlMs` (see `namedWrite`).
   */
  const saveThreadArguments = (options: { thread: ThreadState; ttlMs: number; fence: Fence; settled: boolean; write: ThreadWrite; audit?: readonly string[]; attempt?: string; attemptTtlMs?: number }) => {
    const { thread, fence, write, attempt } = options;
    const at = keys.ofThread(thread.threadKey);
    return [
      at.thread(thread.threadKey),
      keys.ofThread(fence.threadKey).fence(fence.threadKey),
      at.executing(thread.threadKey),
      at.messages(thread.threadKey),
      at.audit(),
      at.attempt(attempt ?? ''),
      fence.token,
      write.metaJson,
      options.ttlMs,
      options.settled ? '1' : '0',
      write.historyJson,
      auditMaxLength,
      attempt === undefined ? '' : (options.attemptTtlMs ?? ATTEMPT_TTL_MS),
      ...(options.audit ?? []),
    ] as const;
  };

  /** Audit events as the scripts append them: prepared (stamped, redacted) once, here. */
  const prepare = (events: readonly AuditEventInput[]) => {
    const prepared = events.map((event) => prepareAuditEvent(event, now));
    return { prepared, args: prepared.flatMap((event) => [event.type, JSON.stringify(event)]) };
  };
  const logStored = (prepared: readonly object[]) => {
    if (auditLogger) for (const event of prepared) logAuditEvent(auditLogger, event, true);
  };

  /** Reads each shard of a schedule (a sorted set) and keeps the `limit` lowest scores overall. */
  const lowestAcrossShards = async (keyOf: (shard: ShardKeys) => string, max: number | string, limit: number): Promise<string[]> => {
    // One pipeline (one round trip) on a single server; a cluster sends each shard's read to its node.
    if (!redis.isCluster) {
      const pipeline = redis.pipeline();
      for (const shard of keys.shards()) pipeline.zrangebyscore(keyOf(shard), '-inf', max, 'WITHSCORES', 'LIMIT', 0, limit);
      return mergeByScore(repliesOf(await pipeline.exec()) as string[][], limit);
    }
    const perShard = await Promise.all(keys.shards().map((shard) => redis.zrangebyscore(keyOf(shard), '-inf', max, 'WITHSCORES', 'LIMIT', 0, limit)));
    return mergeByScore(perShard, limit);
  };

  const keptSchedule = { redis, claimKept: (key: string, record: string, now: number, until: number) => run.csClaimKept(key, record, now, until), lowestAcrossShards };
  /** A take-back is kept in its thread's shard, a card refresh in its step's. */
  const takeBacks = createRedisKeptSchedule({ ...keptSchedule, shardOf: (takeBack: PendingTakeBack) => keys.ofThread(takeBack.threadKey), keyOf: (shard) => shard.takeBacks(), record: takeBackRecord, parse: parseTakeBackRecord });
  const cardRefreshes = createRedisKeptSchedule({ ...keptSchedule, shardOf: (refresh: PendingCardRefresh) => keys.ofStep(refresh.stepId), keyOf: (shard) => shard.cardRefreshes(), record: cardRefreshRecord, parse: parseCardRefreshRecord });

  /**
   * A marker whose call will not start comes off again, under the fence, with a `tool-executed`
   * error after its `tool-started`. If that fails too the marker stays: a successor reports the
   * call as interrupted ("may or may not have completed") and never runs it, which is safe.
   */
  const unmarkExecuting = async ({ fence, toolCallId, markerJson, audit, reason }: { fence: Fence; toolCallId: string; markerJson: string; audit: readonly AuditEventInput[]; reason: string }) => {
    const started = audit.find((event) => event.type === 'tool-started');
    const notRun: AuditEventInput[] = started
      ? [{ type: 'tool-executed', teamId: started.teamId, channel: started.channel, threadTs: started.threadTs, toolName: started.toolName, toolCallId, status: 'error', durationMs: 0, error: reason }]
      : [];
    const { prepared, args } = prepare(notRun);
    const at = keys.ofThread(fence.threadKey);
    try {
      if ((await run.csUnmarkExecuting(at.executing(fence.threadKey), at.fence(fence.threadKey), at.audit(), fence.token, toolCallId, markerJson, auditMaxLength, ...args)) === 'ok') logStored(prepared);
    } catch (error) {
      if (!closed) onRedisError?.({ kind: 'command', error });
    }
  };

  /**
   * Runs a script that withdraws authority (a `withdraws` step commit, a grant's revoke) as a call's
   * executing marker is written: with a WAIT for the replicas (and a WAITAOF for the primary's
   * append-only file, see `waitsForDisk`), on the confirmed writes' connection. `direct` is the
   * plain write, when nothing is waited for. Fewer confirmations than required leave the write
   * standing (it took effect on the primary): the caller tells the person.
   */
  const withdraw = async (options: { shard: number; script: string; keys: readonly string[]; args: ReadonlyArray<string | number> }, direct: () => Promise<unknown>): Promise<{ reply: unknown; unconfirmed?: ReplicaShortfall }> => {
    // Before the write: failing here, it was never sent.
    const disk = await waitsForDisk().catch(notSent);
    if (replicas === 0 && !disk) return { reply: await direct() };
    const written = await confirmedWrites.run({ ...options, disk });
    if (written.waitError) forgetPersistence();
    const notOnDisk = disk && (written.waitError !== undefined || written.onDisk === false);
    if (!written.waitError && written.confirmed >= written.required && !notOnDisk) return { reply: written.reply };
    return { reply: written.reply, unconfirmed: { wanted: written.required, confirmed: written.confirmed, ...(notOnDisk ? { onDisk: false as const } : {}) } };
  };

  const store: StateStore = {
    kind: 'redis',

    async claimOnce(ids, ttlMs, { claimant = randomUUID() } = {}) {
      // Sent together: one round trip on a single server; in a cluster the keys may live on different nodes.
      const results = await Promise.all(ids.map((id) => run.csClaimOnce(keys.once(id), claimant, ttlMs)));
      return results.every((claimed) => claimed === 1);
    },

    async markDeleted({ channel, ts }, ttlMs) {
      await redis.set(keys.once(deletedPostId({ channel, ts })), '1', 'PX', ttlMs);
    },

    async wasDeleted({ channel, ts }) {
      return (await redis.exists(keys.once(deletedPostId({ channel, ts })))) === 1;
    },

    async getThread(threadKey) {
      const at = keys.ofThread(threadKey);
      return histories.read(threadKey, (await run.csReadThread(at.thread(threadKey), at.messages(threadKey))) as ThreadReply);
    },

    async getThreadAndDeletion(threadKey, post) {
      // A cluster may keep the two keys on different nodes: two reads at once.
      if (redis.isCluster) {
        const [thread, deleted] = await Promise.all([store.getThread(threadKey), store.wasDeleted(post)]);
        return { thread, deleted };
      }
      const at = keys.ofThread(threadKey);
      const pipeline = redis.pipeline();
      (pipeline as unknown as ScriptRunner).csReadThread(at.thread(threadKey), at.messages(threadKey));
      pipeline.exists(keys.once(deletedPostId(post)));
      const [threadReply, deleted] = repliesOf(await pipeline.exec());
      return { thread: histories.read(threadKey, threadReply as ThreadReply), deleted: deleted === 1 };
    },

    async saveThread(thread, ttlMs, fence, { settled = false, audit = [], attempt: given } = {}) {
      const { prepared, args } = prepare(audit);
      // A save with records is always named (`namedWrite`): resent after a lost reply, it would be
      // refused as 'stale', sent again as a rewrite and append its records a second time.
      const attempt = given ?? (audit.length > 0 ? randomUUID() : undefined);
      const reply = await histories.write(thread, (write) => run.csSaveThread(...saveThreadArguments({ thread, ttlMs, fence, settled, write, audit: args, ...(attempt ? { attempt } : {}) })));
      if (reply === 'fenced') throw new FencedError(fence.threadKey);
      logStored(prepared);
    },

    async createThreadIfAbsent(thread, ttlMs) {
      const at = keys.ofThread(thread.threadKey);
      const reply = await histories.write(thread, (write) =>
        run.csCreateThreadIfAbsent(at.thread(thread.threadKey), at.messages(thread.threadKey), write.metaJson, ttlMs, write.historyJson), { rewrite: true },
      );
      return reply !== 0;
    },

    // Always named (a fresh attempt unless given): a resend after a lost reply finds the thread newer
    // than its patch was planned from, and sent again as a rewrite it would write the step and its
    // `approval-requested` records a second time.
    async createStep({ step, thread, ttlMs, audit, fence, attempt = randomUUID() }) {
      const { prepared, args } = prepare(audit);
      const stepAt = keys.ofStep(step.stepId);
      const threadAt = keys.ofThread(thread.threadKey);
      const reply = await histories.write(thread, (write) =>
        run.csCreateStep(
          stepAt.step(step.stepId),
          threadAt.thread(thread.threadKey),
          stepAt.schedule('expiry'),
          stepAt.schedule('reminder'),
          keys.ofChannel(step.teamId, step.channel).pending(step.teamId, step.channel),
          stepAt.audit(),
          keys.ofThread(fence.threadKey).fence(fence.threadKey),
          threadAt.messages(thread.threadKey),
          stepAt.openSteps(step.teamId),
          stepAt.openStepTeams(),
          stepAt.schedule('escalation'),
          // The thread's shard, which is its step's (`newStepId`).
          threadAt.attempt(attempt),
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
          step.escalation?.nextAt ?? '',
          ATTEMPT_TTL_MS,
          ...args,
        ),
      );
      // Otherwise written: now, or ('written') before, by this named write whose reply was lost (`namedWrite`).
      if (reply === 'fenced') throw new FencedError(fence.threadKey);
      logStored(prepared);
    },

    async getStep(stepId) {
      return stepFromRecord(await redis.hgetall(keys.ofStep(stepId).step(stepId)));
    },

    async getStepAndThread(stepId, threadKey) {
      // A cluster may keep them on different nodes (a step id from elsewhere): two reads at once.
      if (redis.isCluster) {
        const [step, thread] = await Promise.all([store.getStep(stepId), store.getThread(threadKey)]);
        return { step, thread };
      }
      const at = keys.ofThread(threadKey);
      const pipeline = redis.pipeline();
      pipeline.hgetall(keys.ofStep(stepId).step(stepId));
      (pipeline as unknown as ScriptRunner).csReadThread(at.thread(threadKey), at.messages(threadKey));
      const [record, threadReply] = repliesOf(await pipeline.exec());
      return { step: stepFromRecord(record as Record<string, string>), thread: histories.read(threadKey, threadReply as ThreadReply) };
    },

    async setStepCard(stepId, cardTs, link) {
      const reply = (await run.csSetStepCard(keys.ofStep(stepId).step(stepId), cardTs, link ?? '')) as [string, string] | null;
      return reply === null ? undefined : { revision: Number(reply[0]), cardTs: reply[1] };
    },

    async replaceStepCard(stepId, { from, to, link }) {
      return (await run.csReplaceStepCard(keys.ofStep(stepId).step(stepId), from, to, link ?? '')) === 1;
    },

    async recordCardCopy(stepId, copy) {
      const recorded = (await run.csRecordCardCopy(keys.ofStep(stepId).step(stepId), copyField(copy), JSON.stringify(copy))) as string | null;
      return recorded === null ? undefined : (JSON.parse(recorded) as CardCopy);
    },

    async commitStep(judged, { attempt = randomUUID() } = {}) {
      const transition = await withStoreStampedGrant(judged, attempt);
      const { prepared, args } = prepare(transition.audit);
      const scriptKeys = [...commitStepKeys(transition), keys.ofStep(transition.step.stepId).attempt(attempt)];
      // Built once, as `commitStepAndQueue`'s: a resend carries the same attempt.
      const scriptArguments = [...commitStepArguments(transition), ATTEMPT_TTL_MS, ...args];
      // An approval goes straight to the primary (a lost one only leaves the call pending).
      const { reply, unconfirmed } = transition.withdraws
        ? await withdraw({ shard: keys.ofStep(transition.step.stepId).index, script: COMMIT_STEP_SCRIPT, keys: scriptKeys, args: scriptArguments }, () => run.csCommitStep(...scriptKeys, ...scriptArguments))
        : { reply: await run.csCommitStep(...scriptKeys, ...scriptArguments), unconfirmed: undefined };
      const result = reply as CommitResult;
      if (result !== 'committed') return { result };
      logStored(prepared);
      return unconfirmed ? { result, unconfirmed } : { result };
    },

    async commitStepAndQueue(judged, resume) {
      const { attempt = randomUUID() } = resume;
      const transition = await withStoreStampedGrant(judged, attempt);
      const { prepared, args } = prepare(transition.audit);
      const { threadKey } = transition.step;
      const at = keys.ofThread(threadKey);
      const scriptKeys = [...commitStepKeys(transition), at.queue(threadKey), at.lock(threadKey), at.busy(), at.inflight(threadKey), at.ready(), at.attempt(attempt)];
      // Built once: a resend (ioredis's after a lost reply, or the confirmed path's) carries the same attempt and nonce.
      const scriptArguments = [
        ...commitStepArguments(transition),
        resume.item,
        resume.lockTtlMs,
        QUEUE_TTL_MS,
        threadKey,
        FENCE_TTL_MS,
        resume.mode,
        READY_HINTS_KEPT,
        ATTEMPT_TTL_MS,
        newTokenNonce(),
        ...args,
      ];
      // A denial that completes the step waits for the replicas with its resume; an approval does not (see `commitStep`).
      const { reply, unconfirmed } = transition.withdraws
        ? await withdraw({ shard: keys.ofStep(transition.step.stepId).index, script: COMMIT_STEP_AND_QUEUE_SCRIPT, keys: scriptKeys, args: scriptArguments }, () => run.csCommitStepAndQueue(...scriptKeys, ...scriptArguments))
        : { reply: await run.csCommitStepAndQueue(...scriptKeys, ...scriptArguments), unconfirmed: undefined };
      const shortfall = unconfirmed ? { unconfirmed } : {};
      if (!Array.isArray(reply)) {
        if (reply !== 'committed') return { result: reply as CommitResult };
        logStored(prepared);
        return { result: 'committed', ...shortfall };
      }
      logStored(prepared);
      const [, token, item] = reply as [string, string, string];
      return { result: 'committed', claim: { token, item }, ...shortfall };
    },

    async commitStepWithThread({ transition, thread, ttlMs, settled = false, attempt }) {
      const { step, fence } = transition;
      // Only what a resume claim changes: the step itself, the complete-steps index and the audit stream.
      if (!fence || transition.grant || transition.completed || transition.closed || !transition.resumed) {
        throw new Error('commitStepWithThread writes resume claims only');
      }
      const { prepared, args } = prepare(transition.audit);
      const stepAt = keys.ofStep(step.stepId);
      const threadAt = keys.ofThread(thread.threadKey);
      const reply = await histories.write(thread, (write) =>
        run.csClaimStepWithThread(
          stepAt.step(step.stepId),
          stepAt.complete(),
          threadAt.thread(thread.threadKey),
          keys.ofThread(fence.threadKey).fence(fence.threadKey),
          threadAt.executing(thread.threadKey),
          threadAt.messages(thread.threadKey),
          // The step's shard, as COMMIT_STEP_SCRIPT appends; a step shares its thread's slot (`newStepId`).
          stepAt.audit(),
          threadAt.attempt(attempt ?? ''),
          transition.fromRevision,
          stepData(step),
          step.stepId,
          fence.token,
          step.phase,
          write.metaJson,
          ttlMs,
          settled ? '1' : '0',
          write.historyJson,
          auditMaxLength,
          attempt === undefined ? '' : ATTEMPT_TTL_MS,
          ...args,
        ),
      );
      // 'written': this named write ran before, its reply lost (`namedWrite`).
      if (typeof reply !== 'number' && reply !== 'written') return reply as CommitResult;
      logStored(prepared);
      return 'committed';
    },

    async dueSteps({ kind, now: at, limit }) {
      return lowestAcrossShards((shard) => shard.schedule(kind), at, limit);
    },

    async unschedule(stepId) {
      const at = keys.ofStep(stepId);
      await redis.multi().zrem(at.schedule('expiry'), stepId).zrem(at.schedule('reminder'), stepId).zrem(at.schedule('escalation'), stepId).exec();
    },

    async scheduleEscalation(stepId, at) {
      const schedule = keys.ofStep(stepId).schedule('escalation');
      if (at === undefined) await redis.zrem(schedule, stepId);
      else await redis.zadd(schedule, at, stepId);
    },

    async postponeDue({ kind, stepId, until }) {
      // XX: never adds an entry back; GT: never brings one forward.
      await redis.zadd(keys.ofStep(stepId).schedule(kind), 'XX', 'GT', until, stepId);
    },

    async claimReminder({ stepId, now: at, until, leaseMs, claimant = randomUUID() }) {
      const stepAt = keys.ofStep(stepId);
      const due = (await run.csClaimReminder(stepAt.schedule('reminder'), stepAt.reminderClaim(stepId), stepId, at, until, claimant, leaseMs)) as string | null;
      return due === null ? undefined : { dueAt: Number(due), until, claimant };
    },

    async keepReminder(stepId, claim, leaseMs) {
      return (await run.csKeepReminder(keys.ofStep(stepId).reminderClaim(stepId), claim.claimant, leaseMs)) === 1;
    },

    async releaseReminder(stepId, claim) {
      await run.csReleaseReminder(keys.ofStep(stepId).reminderClaim(stepId), claim.claimant);
    },

    async finishReminder(stepId, claim) {
      const stepAt = keys.ofStep(stepId);
      await run.csFinishReminder(stepAt.schedule('reminder'), stepAt.reminderClaim(stepId), stepId, claim.until, claim.claimant);
    },

    ...keptScheduleMethods({ takeBacks, cardRefreshes }),

    async completedSteps({ before, limit }) {
      return lowestAcrossShards((shard) => shard.complete(), before, limit);
    },

    async postponeCompleted({ stepId, until }) {
      // As `postponeDue`: XX never adds an entry back, GT never brings one forward.
      await redis.zadd(keys.ofStep(stepId).complete(), 'XX', 'GT', until, stepId);
    },

    async listPendingSteps({ teamId, channel, limit }) {
      const index = keys.ofChannel(teamId, channel).pending(teamId, channel);
      const open = [];
      for (const stepId of await redis.zrevrange(index, 0, limit * 4)) {
        const fields = await redis.hgetall(keys.ofStep(stepId).step(stepId));
        // A step a newer release wrote is open for all this one knows: it stays indexed for the releases that list it.
        const step = unlessNewerSchema(() => stepFromRecord(fields));
        if (step === NEWER_SCHEMA) continue;
        if (step?.phase === 'pending') open.push(step);
        else await redis.zrem(index, stepId);
        if (open.length >= limit) break;
      }
      return open;
    },

    async listOpenSteps({ teamId, limit }) {
      // Each shard keeps its own index of the workspace's open steps (the scripts that open and
      // close a step write it in the step's slot); closing takes a step off in the same script, so
      // an index holds open steps and those whose record expired (dropped here).
      const perShard = await Promise.all(keys.shards().map(async (shard) => ({ index: shard.openSteps(teamId), entries: await redis.zrevrange(shard.openSteps(teamId), 0, limit - 1, 'WITHSCORES') })));
      const newest = perShard
        .flatMap(({ index, entries }) => pairs(entries).map(([stepId, score]) => ({ index, stepId, score })))
        .sort((left, right) => right.score - left.score)
        .slice(0, limit);
      const records = await Promise.all(newest.map(({ stepId }) => redis.hgetall(keys.ofStep(stepId).step(stepId))));
      const open: PendingStep[] = [];
      for (const [position, fields] of records.entries()) {
        // A step a newer release wrote stays indexed, as in `listPendingSteps`.
        const step = unlessNewerSchema(() => stepFromRecord(fields));
        if (step === NEWER_SCHEMA) continue;
        const entry = newest[position] as { index: string; stepId: string };
        if (step?.phase === 'pending') open.push(step);
        else if (!step) await redis.zrem(entry.index, entry.stepId);
      }
      return open;
    },

    async teamsWithOpenSteps() {
      const perShard = await Promise.all(keys.shards().map((shard) => redis.smembers(shard.openStepTeams())));
      return [...new Set(perShard.flat())];
    },

    async listTeamGrants({ teamId }) {
      const perShard = await Promise.all(keys.shards().map((shard) => redis.smembers(shard.grantChannels(teamId))));
      const live: Grant[] = [];
      for (const channel of new Set(perShard.flat())) live.push(...(await this.listGrants({ teamId, channel })));
      return live.sort((left, right) => left.createdAt - right.createdAt);
    },

    async listGrants({ teamId, channel, hideEndedBy }) {
      const grants = keys.ofChannel(teamId, channel).grants(teamId, channel);
      // Live and removed by Redis's clock only (LIST_GRANTS_SCRIPT); the reader's, when given, only leaves out one it thinks over.
      const stored = (await run.csListGrants(grants, clockArgument())) as string[];
      const live = stored.map((json) => JSON.parse(json) as Grant).filter((grant) => hideEndedBy === undefined || grant.expiresAt > hideEndedBy);
      return live.sort((left, right) => left.createdAt - right.createdAt);
    },

    async revokeGrant({ teamId, channel, grantId, audit }) {
      const channelAt = keys.ofChannel(teamId, channel);
      const grants = channelAt.grants(teamId, channel);
      // Before the write: failing here, it was never sent.
      const json = await redis.hget(grants, grantId).catch(notSent);
      if (json === null) return undefined;
      const grant = JSON.parse(json) as Grant;
      const { prepared, args } = prepare([audit(grant)]);
      const scriptKeys = [grants, channelAt.audit()];
      const scriptArguments = [grantId, json, auditMaxLength, ...args];
      const { reply, unconfirmed } = await withdraw({ shard: channelAt.index, script: REVOKE_GRANT_SCRIPT, keys: scriptKeys, args: scriptArguments }, () => run.csRevokeGrant(...scriptKeys, ...scriptArguments));
      if (reply !== 1) return undefined;
      logStored(prepared);
      return unconfirmed ? { grant, unconfirmed } : { grant };
    },

    async enqueueWork(threadKey, item, lockTtlMs, { attempt = randomUUID() } = {}) {
      const at = keys.ofThread(threadKey);
      const claim = await run.csEnqueueAndLock(
        at.queue(threadKey),
        at.lock(threadKey),
        at.busy(),
        at.fence(threadKey),
        at.inflight(threadKey),
        at.attempt(attempt),
        item,
        lockTtlMs,
        QUEUE_TTL_MS,
        threadKey,
        now(),
        FENCE_TTL_MS,
        ATTEMPT_TTL_MS,
        newTokenNonce(),
      );
      if (!Array.isArray(claim)) return undefined;
      const [token, first] = claim as [string, string];
      return { token, item: first };
    },

    async handOffWork(threadKey, item, { attempt = randomUUID() } = {}) {
      const at = keys.ofThread(threadKey);
      // The attempt rides in the command, so ioredis's resend after a lost reply carries it too.
      await run.csHandOffWork(at.queue(threadKey), at.lock(threadKey), at.busy(), at.ready(), at.attempt(attempt), item, QUEUE_TTL_MS, threadKey, now(), READY_HINTS_KEPT, ATTEMPT_TTL_MS);
    },

    async nextReadyThreads(options) {
      if (closed) return [];
      return ready.next(options);
    },

    async returnReadyThreads(threadKeys) {
      const byList = new Map<string, string[]>();
      for (const threadKey of threadKeys) {
        const list = keys.ofThread(threadKey).ready();
        byList.set(list, [...(byList.get(list) ?? []), threadKey]);
      }
      // LPUSH puts its last argument first: reversed, the hints keep their order at the head.
      await Promise.all([...byList].map(([list, returned]) => redis.lpush(list, ...returned.reverse())));
    },

    async tryLock(threadKey, ttlMs) {
      const at = keys.ofThread(threadKey);
      const token = await run.csTryLock(at.lock(threadKey), at.fence(threadKey), ttlMs, now(), FENCE_TTL_MS, newTokenNonce());
      return typeof token === 'string' ? token : undefined;
    },

    async lockAndTake(threadKey, ttlMs) {
      const at = keys.ofThread(threadKey);
      const claim = await run.csLockAndTake(
        at.lock(threadKey),
        at.fence(threadKey),
        at.queue(threadKey),
        at.inflight(threadKey),
        at.thread(threadKey),
        at.messages(threadKey),
        ttlMs,
        now(),
        FENCE_TTL_MS,
        QUEUE_TTL_MS,
        at.step(''),
        stepIdPrefix(threadKey),
        newTokenNonce(),
      );
      if (!Array.isArray(claim)) return undefined;
      const [token, item, stepId, threadReply, stepFields] = claim as [string, string | null | false | undefined, string?, ThreadReply?, string[]?];
      if (typeof item !== 'string') return { token };
      if (stepId === undefined || stepFields === undefined) return { token, item };
      // A step or thread a newer release wrote is read again by the resume, which then says so (`NewerSchemaError`).
      const read = unlessNewerSchema(() => ({ stepId, step: stepFromRecord(stepFields), thread: histories.read(threadKey, threadReply ?? null) }));
      return read === NEWER_SCHEMA ? { token, item } : { token, item, read };
    },

    async takeWork(fence) {
      const { threadKey } = fence;
      const at = keys.ofThread(threadKey);
      const [status, item] = (await run.csTakeWork(at.queue(threadKey), at.inflight(threadKey), at.fence(threadKey), fence.token, QUEUE_TTL_MS)) as [string, string?];
      if (status === 'fenced') throw new FencedError(threadKey);
      return item;
    },

    async takeLeftover(threadKey) {
      return (await redis.lindex(keys.ofThread(threadKey).inflight(threadKey), 0)) ?? undefined;
    },

    async finishWork(fence, finished, lockTtlMs, closing, { attempt } = {}) {
      const { threadKey } = fence;
      const at = keys.ofThread(threadKey);
      const finishArguments = [at.queue(threadKey), at.lock(threadKey), at.inflight(threadKey), at.busy(), at.fence(threadKey), fence.token, finished, lockTtlMs, threadKey, QUEUE_TTL_MS] as const;
      let finishReply: unknown;
      if (closing) {
        // One MULTI (one round trip, one slot: the thread's keys share its tag). Both scripts check
        // the same fence inside one transaction, so either both write or neither does.
        let sends = 0;
        const saveReply = await histories.write(closing.thread, async (write) => {
          // Named for as long as the caller may send the finish again (while its lock can be its own).
          const named = attempt ? { attempt, attemptTtlMs: Math.max(ATTEMPT_TTL_MS, lockTtlMs) } : {};
          const save = saveThreadArguments({ ...closing, fence, settled: closing.settled ?? false, write, ...named });
          sends += 1;
          // A patch refused as stale comes back as a rewrite; the item is finished by then.
          if (sends > 1) return run.csSaveThread(...save);
          const transaction = redis.multi() as unknown as ScriptRunner & { exec(): Promise<Array<[Error | null, unknown]> | null> };
          transaction.csSaveThread(...save);
          transaction.csFinishWork(...finishArguments);
          const [saved, finishedReply] = repliesOf(await transaction.exec());
          finishReply = finishedReply;
          return saved;
        });
        if (saveReply === 'fenced') throw new FencedError(threadKey);
        // The named save ran before, in one transaction with this finish (its reply lost): the item
        // is finished, and a fenced finish now only says the thread is another process's.
        if (saveReply === 'written' && (finishReply as [string])[0] === 'fenced') return undefined;
      } else finishReply = await run.csFinishWork(...finishArguments);
      const [status, item] = finishReply as [string, string?];
      if (status === 'fenced') throw new FencedError(threadKey);
      return item;
    },

    async busyThreads({ limit, before }) {
      // Scored by when work was last queued (the enqueue and hand-off scripts' ZADD).
      return lowestAcrossShards((shard) => shard.busy(), before ?? '+inf', limit);
    },

    async stalledThreads({ limit, before }) {
      // One script per shard, each on its node (the lock keys share the shard's slot), merged by when work was queued.
      const perShard = await Promise.all(
        keys.shards().map((shard) => run.csStalledThreads(shard.busy(), before, limit, STALLED_THREADS_SCANNED, shard.lock('')) as Promise<string[]>),
      );
      return mergeByScore(perShard, limit);
    },

    async extendLock(fence, ttlMs) {
      const at = keys.ofThread(fence.threadKey);
      const renewed = await run.csExtendLock(at.lock(fence.threadKey), at.fence(fence.threadKey), fence.token, ttlMs);
      return renewed === 1 ? 'current' : renewed === -1 ? 'missing' : 'taken';
    },

    async fenceState(fence) {
      const newest = await redis.get(keys.ofThread(fence.threadKey).fence(fence.threadKey));
      return newest === null ? 'missing' : newest === fence.token ? 'current' : 'taken';
    },

    async releaseLockIfIdle(fence, lockTtlMs) {
      const { threadKey } = fence;
      const at = keys.ofThread(threadKey);
      return (await run.csReleaseIfIdle(at.queue(threadKey), at.lock(threadKey), at.inflight(threadKey), at.busy(), at.fence(threadKey), fence.token, lockTtlMs, threadKey)) as 'more' | 'released' | 'fenced';
    },

    async markExecuting({ fence, toolCallId, marker, ttlMs, audit, grant }) {
      const { prepared, args } = prepare(audit);
      const at = keys.ofThread(fence.threadKey);
      const markerJson = JSON.stringify(marker);
      // Looked up under the thread's shard: a channel's grants share its threads' slot, and a grant
      // of another channel (never one that clears this thread's calls) is simply not found there.
      const grantsKey = grant ? at.grants(grant.teamId, grant.channel) : at.executing(fence.threadKey);
      // Named once, here: a resend after a lost reply carries the same attempt (`namedWrite`).
      const scriptKeys = [at.executing(fence.threadKey), at.fence(fence.threadKey), at.audit(), grantsKey, at.attempt(randomUUID())];
      const scriptArguments = [fence.token, toolCallId, markerJson, ttlMs, grant?.grantId ?? '', grant ? clockArgument() : '', auditMaxLength, ATTEMPT_TTL_MS, ...args];
      const disk = await waitsForDisk();
      if (replicas === 0 && !disk) {
        const reply = await run.csMarkExecuting(...scriptKeys, ...scriptArguments);
        if (reply === 'fenced') throw new FencedError(fence.threadKey);
        if (reply === 'grant-gone') return 'grant-gone';
        logStored(prepared);
        return 'marked';
      }
      // The call starts once the replicas have the marker too: a failover before that would lose
      // it (and the lock and claim written before it), and a successor would run the call again.
      // Likewise the primary's append-only file: a restart after an OS crash would lose it.
      const takeBack = (reason: string) => unmarkExecuting({ fence, toolCallId, markerJson, audit, reason });
      let written;
      try {
        written = await confirmedWrites.run({ shard: at.index, script: MARK_EXECUTING_SCRIPT, keys: scriptKeys, args: scriptArguments, disk });
        if (written.waitError) {
          forgetPersistence();
          throw written.waitError;
        }
      } catch (error) {
        // The marker may have been written before the wait failed (a refused WAIT, a lost connection).
        await takeBack(`Not run: Redis failed while recording it (${error instanceof Error ? error.message : String(error)})`);
        throw error;
      }
      if (written.reply === 'fenced') throw new FencedError(fence.threadKey);
      if (written.reply === 'grant-gone') return 'grant-gone';
      logStored(prepared);
      if (written.confirmed >= written.required && written.onDisk !== false) return 'marked';
      const shortfall =
        written.confirmed >= written.required
          ? new ReplicationNotConfirmedError({ wanted: 0, confirmed: 0, onDisk: false, timeoutMs: Math.max(waitTimeoutMs, DISK_WAIT_FLOOR_MS) })
          : new ReplicationNotConfirmedError({ wanted: written.required, confirmed: written.confirmed, timeoutMs: waitTimeoutMs });
      await takeBack(shortfall.message);
      throw shortfall;
    },

    async finishExecuting({ threadKey, toolCallId, marker, audit }) {
      const { prepared, args } = prepare([audit]);
      const at = keys.ofThread(threadKey);
      // Named (`namedWrite`): a resend after a lost reply does not write the call's `tool-executed` again.
      await run.csFinishExecuting(at.executing(threadKey), at.audit(), at.attempt(randomUUID()), toolCallId, JSON.stringify(marker), auditMaxLength, ATTEMPT_TTL_MS, ...args);
      logStored(prepared);
    },

    async executingCalls(threadKey) {
      const markers = new Map<string, ExecutingMarker>();
      for (const [toolCallId, json] of Object.entries(await redis.hgetall(keys.ofThread(threadKey).executing(threadKey)))) {
        markers.set(toolCallId, parseMarker(json));
      }
      return markers;
    },

    ping() {
      return health.run();
    },

    async risks() {
      const [shards, others] = await Promise.all([readPersistence({ maxAgeMs: risksMaxAgeMs }), readMasters(risksMaxAgeMs)]);
      return [...persistenceRisks({ persistence: combinePersistence([shards, ...others.read]), waitReplicas: replicas }), ...unreadMasterRisks(others)];
    },

    async close() {
      closed = true;
      ready.close();
      confirmedWrites.close();
      redis.disconnect();
    },
  };
  // A failed call (a write refused, the connection lost) drops the health probe's kept success: the next check asks Redis.
  const onFailure: RedisFailureListener = (failure) => {
    health.forget();
    onRedisError?.(failure);
  };
  return reportingCommandFailures(afterLayout(store, layout), { onFailure, active: () => !closed });
}

/**
 * Every method waits for the key layout to be checked and legacy keys moved first (once per
 * process; see `key-layout.ts`), so no read misses a pending step that is still under its old name.
 */
function afterLayout(store: StateStore, layout: () => Promise<void>): StateStore {
  const gated = { ...store };
  for (const name of Object.keys(store) as Array<keyof StateStore>) {
    const method = store[name];
    if (typeof method !== 'function' || name === 'close' || name === 'ping' || name === 'risks') continue;
    (gated as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      await layout();
      return (method as (...parameters: unknown[]) => Promise<unknown>).apply(store, args);
    };
  }
  return gated;
}

/** Beside the delivery dedupe's `post:` ids, under the same untagged `once:` prefix. */
function deletedPostId({ channel, ts }: DeletedPost): string {
  return `deleted:${channel}:${ts}`;
}

/** A pipeline's replies, or its first error. */
function repliesOf(results: Array<[Error | null, unknown]> | null): unknown[] {
  return (results ?? []).map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

/** [member, score, member, score…] → [member, score] pairs. */
function pairs(flat: readonly string[]): Array<[string, number]> {
  const result: Array<[string, number]> = [];
  for (let index = 0; index + 1 < flat.length; index += 2) result.push([flat[index] as string, Number(flat[index + 1])]);
  return result;
}

/** [member, score, member, score…] lists, each sorted by score → the `limit` lowest members overall. */
function mergeByScore(perShard: readonly string[][], limit: number): string[] {
  const entries: Array<[string, number]> = [];
  for (const flat of perShard) for (let index = 0; index + 1 < flat.length; index += 2) entries.push([flat[index] as string, Number(flat[index + 1])]);
  return entries.sort((left, right) => left[1] - right[1]).slice(0, limit).map(([member]) => member);
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

/**
 * `read`'s answer, read again once older than the `maxAgeMs` a caller gives; a failed read is not
 * kept (unless a newer one replaced it meanwhile), so the next caller asks again.
 */
function cachedRead<T>(read: () => Promise<T>): { get(maxAgeMs: number): Promise<T>; forget(): void } {
  let kept: { answer: Promise<T>; at: number } | undefined;
  return {
    get(maxAgeMs) {
      if (kept === undefined || performance.now() - kept.at >= maxAgeMs) {
        const answer: Promise<T> = read().catch((error: unknown) => {
          if (kept?.answer === answer) kept = undefined;
          throw error;
        });
        kept = { answer, at: performance.now() };
      }
      return kept.answer;
    },
    forget() {
      kept = undefined;
    },
  };
}
