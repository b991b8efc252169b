import type { Cluster, Redis } from 'ioredis';
import { DEFAULT_AUDIT_MAX_LENGTH, type AuditLogger } from '../audit/audit-log.js';
import { reportingCommandFailures, type RedisFailureListener } from './redis-failures.js';
import type { RedisTarget } from '../config/redis-target.js';
import { unreadMasterRisks } from './cluster-master-persistence.js';
import { connectRedisClient } from './connect-to-redis.js';
import { prepareKeyLayout } from './key-layout.js';
import { createRedisKeys, DEFAULT_REDIS_SHARDS } from './redis-keys.js';
import { createReadyWaiter } from './redis-ready-waiter.js';
import { SCRIPTS, type ScriptRunner } from './redis-script-commands.js';
import type { PendingCardRefresh, PendingTakeBack, StateStore } from './state-store.js';
import { DEFAULT_REPLICA_WAIT_TIMEOUT_MS } from './replica-confirmed-write.js';
import { combinePersistence, persistenceRisks, primariesUnreadRisk } from './redis-persistence.js';
import { createThreadHistories } from './redis-thread-history.js';
import { assertTakesWrites } from './redis-takes-writes.js';
import { createWriteProbe } from './redis-write-probe.js';
import { createSharedHealthProbe } from './shared-health-probe.js';
import { parseTakeBackRecord, takeBackRecord } from './take-back-record.js';
import { cardRefreshRecord, parseCardRefreshRecord } from './card-refresh-record.js';
import { createRedisKeptSchedule } from './redis-kept-schedule.js';
import { keptScheduleMethods } from './kept-schedule.js';
import { createRedisStoreContext } from './redis-store-context.js';
import { createRedisDurableWrites } from './redis-durable-writes.js';
import { createRedisDeliveryStore } from './redis-delivery-store.js';
import { createRedisThreadStore } from './redis-thread-store.js';
import { createRedisExecutingMarkers } from './redis-executing-markers.js';
import { createRedisStepRecords } from './redis-step-records.js';
import { createRedisStepCommits } from './redis-step-commits.js';
import { createRedisStepSchedules } from './redis-step-schedules.js';
import { createRedisOpenSteps } from './redis-open-steps.js';
import { createRedisGrantStore } from './redis-grant-store.js';
import { createRedisWorkQueue } from './redis-work-queue.js';

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
    // ROLE is answered by a Redis that refuses every write (full, too few replicas): /healthz must see that,
    // hence the write. No PING: the two already need an answer, and a Cluster's PING goes to a node picked at
    // random, so a frozen master the bot does not need could fail the check (the probe skips such a master).
    // Sent together, one round trip: after the bot's thread was busy, every reply is read at once
    // (health-check.ts yields once for them). The first failure in this order is the one told.
    const settled = await Promise.allSettled([assertTakesWrites(redis), probeWrites()]);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }, { reuseForMs: healthProbeReuseMs });
  // A lost connection, like a failed call below, drops the kept success: the next check asks Redis.
  redis.on('close', () => health.forget());
  const durable = createRedisDurableWrites({ redis, keys, waitReplicas, waitTimeoutMs, reportConnectionError });
  const { replicas, readShards, readMasters, confirmedWrites } = durable;
  const context = createRedisStoreContext({ redis, run, keys, histories, now, auditLogger, auditMaxLength, serverClock, onRedisError, isClosed: () => closed });
  const { lowestAcrossShards } = context;

  const keptSchedule = { redis, claimKept: (key: string, record: string, now: number, until: number) => run.csClaimKept(key, record, now, until), lowestAcrossShards };
  /** A take-back is kept in its thread's shard, a card refresh in its step's. */
  const takeBacks = createRedisKeptSchedule({ ...keptSchedule, shardOf: (takeBack: PendingTakeBack) => keys.ofThread(takeBack.threadKey), keyOf: (shard) => shard.takeBacks(), record: takeBackRecord, parse: parseTakeBackRecord });
  const cardRefreshes = createRedisKeptSchedule({ ...keptSchedule, shardOf: (refresh: PendingCardRefresh) => keys.ofStep(refresh.stepId), keyOf: (shard) => shard.cardRefreshes(), record: cardRefreshRecord, parse: parseCardRefreshRecord });

  const delivery = createRedisDeliveryStore(context);
  const threads = createRedisThreadStore({ ...context, delivery });
  // One file per concern, each over the same client, keys and helpers (`redis-store-context.ts`).
  const store: StateStore = {
    kind: 'redis',
    ...delivery,
    ...threads,
    ...createRedisStepRecords({ ...context, threads }),
    ...createRedisStepCommits({ ...context, durable }),
    ...createRedisStepSchedules(context),
    ...keptScheduleMethods({ takeBacks, cardRefreshes }),
    ...createRedisOpenSteps(context),
    ...createRedisGrantStore({ ...context, durable }),
    ...createRedisWorkQueue({ ...context, ready }),
    ...createRedisExecutingMarkers({ ...context, durable }),

    ping() {
      return health.run();
    },

    async risks() {
      // A shard's primary that would not say is named, not thrown: /healthz drops every warning of a risks() that fails.
      const [shards, others] = await Promise.all([readShards(risksMaxAgeMs), readMasters(risksMaxAgeMs)]);
      const read = [...shards.read, ...others.read];
      return [
        ...(read.length > 0 ? persistenceRisks({ persistence: combinePersistence(read), waitReplicas: replicas }) : []),
        ...(shards.errors.length > 0 ? [primariesUnreadRisk(shards.errors[0])] : []),
        ...unreadMasterRisks(others),
      ];
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
