import type { Cluster, Redis } from 'ioredis';
import type { AuditEventInput } from '../audit/audit-event.js';
import { logAuditEvent, type AuditLogger } from '../audit/audit-log.js';
import { prepareAuditEvent } from '../audit/prepare-audit-event.js';
import type { RedisFailureListener } from './redis-failures.js';
import type { RedisKeys, ShardKeys } from './redis-keys.js';
import { mergeByScore, repliesOf } from './redis-replies.js';
import type { ScriptRunner } from './redis-script-commands.js';
import type { createThreadHistories, ThreadWrite } from './redis-thread-history.js';
import type { Fence } from './state-store.js';
import type { ThreadState } from './thread-state.js';

/** Work queued for a thread outlives a crashed holder for this long, then Redis drops it. */
export const QUEUE_TTL_MS = 24 * 60 * 60 * 1000;
/** A thread's newest fencing token is kept this long after its last lock; tokens only grow anyway. */
export const FENCE_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * How long a step commit, a write that may take a thread's lock, or a named save (`NamedWrite`) is
 * remembered for a resend of it: ioredis sends a command whose reply was lost again within seconds
 * of reconnecting, or fails it.
 */
export const ATTEMPT_TTL_MS = 5 * 60 * 1000;

/** Hints beyond this many are dropped (oldest first) when no worker takes them; the recovery sweep still finds the work. */
export const READY_HINTS_KEPT = 10_000;

/**
 * What every part of the Redis store (one file per concern: `redis-thread-store.ts`,
 * `redis-step-commits.ts`, …) shares: its client, scripts and keys, and the helpers that build their
 * scripts' calls.
 */
export type RedisStoreContext = ReturnType<typeof createRedisStoreContext>;

export function createRedisStoreContext({
  redis,
  run,
  keys,
  histories,
  now,
  auditLogger,
  auditMaxLength,
  serverClock,
  onRedisError,
  isClosed,
}: {
  redis: Redis | Cluster;
  run: ScriptRunner;
  keys: RedisKeys;
  histories: ReturnType<typeof createThreadHistories>;
  now: () => number;
  auditLogger: AuditLogger | undefined;
  auditMaxLength: number;
  serverClock: (() => number) | undefined;
  onRedisError: RedisFailureListener | undefined;
  /** Whether the store was closed: its last calls then fail on purpose, unreported. */
  isClosed: () => boolean;
}) {
  /** What the scripts judge deadlines by in place of the server's `TIME` ('': `TIME` itself). */
  const clockArgument = () => (serverClock ? serverClock() : '');

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

  return { redis, run, keys, histories, now, auditMaxLength, onRedisError, isClosed, clockArgument, saveThreadArguments, prepare, logStored, lowestAcrossShards };
}
