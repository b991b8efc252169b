import type { Cluster, Redis } from 'ioredis';
import { CountersignError, ErrorCode } from '../errors/countersign-error.js';
import { migrateLegacyKeys } from './migrate-legacy-keys.js';
import { MAX_REDIS_SHARDS, type RedisKeys } from './redis-keys.js';

/**
 * How long a check of the shard-count marker holds: a Redis that lost the marker without this
 * process seeing its connection drop (the key evicted, a Cluster node restarted behind the
 * cluster client, a FLUSHDB) has it written again by the first command after this.
 */
const SHARD_COUNT_RECHECK_MS = 60_000;

/**
 * Gets the keyspace ready before a store's commands: the shard count must be the one the data was
 * written with (`shardCountGuard`), and keys of the untagged layout are moved (once per process).
 * A failure is not remembered: the next command tries again (Redis may just have been away).
 */
export function prepareKeyLayout(options: { redis: Redis | Cluster; keys: RedisKeys; keyPrefix: string }): () => Promise<void> {
  const shardCount = shardCountGuard(options);
  let migrated: Promise<void> | undefined;
  return async () => {
    await shardCount();
    migrated ??= migrateLegacyKeys(options).catch((error: unknown) => {
      migrated = undefined;
      throw error;
    });
    await migrated;
  };
}

/**
 * For every writer of the sharded layout (the store, the audit log), awaited before it writes: the
 * shard count must be the one the data was written with (a process with another count would read
 * and write other keys, and work would go missing without an error). Its marker is written (SET NX,
 * compared) before the first write, again before the first write after the connection dropped, and
 * at least every `SHARD_COUNT_RECHECK_MS`: a Redis that restarted without its data lost the marker,
 * and without it `npm run audit` cannot tell the count and a process started with another count
 * would be let in beside the running ones. One round trip a minute. A failure is not remembered.
 */
export function shardCountGuard(options: { redis: Redis | Cluster; keys: RedisKeys; recheckMs?: number; now?: () => number }): () => Promise<void> {
  const { redis, keys, recheckMs = SHARD_COUNT_RECHECK_MS, now = Date.now } = options;
  let asserted: { done: Promise<void>; at: number } | undefined;
  // Forgotten as soon as the connection drops: what it reconnects to may be a Redis without the
  // marker. The next write asserts it again before it is sent, so it goes out ahead of that write.
  redis.on('close', () => (asserted = undefined));
  return async () => {
    if (asserted === undefined || now() - asserted.at >= recheckMs) {
      const attempt = { at: now(), done: assertShardCount({ redis, keys }) };
      attempt.done.catch(() => {
        if (asserted === attempt) asserted = undefined;
      });
      asserted = attempt;
    }
    await asserted.done;
  };
}

/** Records this process's shard count unless one is recorded, and refuses another. */
async function assertShardCount({ redis, keys }: { redis: Redis | Cluster; keys: RedisKeys }): Promise<void> {
  const written = await redis.set(keys.shardCountMarker(), String(keys.shardCount), 'NX', 'GET');
  if (written !== null && written !== String(keys.shardCount)) throw new RedisShardsMismatchError({ configured: keys.shardCount, stored: Number(written) });
}

/**
 * The shard count the bot's writers record (`shardCountGuard`), without recording one: a reader such
 * as `npm run audit` takes the data's count from here, so it reads every shard's stream whatever
 * COUNTERSIGN_REDIS_SHARDS its own shell has. Undefined while no bot has written to this prefix
 * (or since Redis lost it, until a running bot writes it again).
 */
export async function readStoredShardCount({ redis, keys }: { redis: Redis | Cluster; keys: RedisKeys }): Promise<number | undefined> {
  const stored = await redis.get(keys.shardCountMarker());
  if (stored === null) return undefined;
  const count = Number(stored);
  if (!(Number.isInteger(count) && count >= 1 && count <= MAX_REDIS_SHARDS)) {
    throw new RangeError(`${keys.shardCountMarker()} holds ${JSON.stringify(stored)}, not a shard count from 1 to ${MAX_REDIS_SHARDS}`);
  }
  return count;
}

/** COUNTERSIGN_REDIS_SHARDS is not the count this Redis's data was laid out with. */
export class RedisShardsMismatchError extends CountersignError {
  override readonly name = 'RedisShardsMismatchError';
  readonly code = ErrorCode.RedisShardsMismatch;
  readonly configured: number;
  readonly stored: number;

  constructor({ configured, stored }: { configured: number; stored: number }) {
    super(
      `COUNTERSIGN_REDIS_SHARDS is ${configured}, but this Redis holds data written with ${stored} shards: set it to ${stored} in every process (changing it needs drained queues and no pending approvals)`,
    );
    this.configured = configured;
    this.stored = stored;
  }
}

/**
 * No shard count is recorded (`<prefix>shards` is missing) although the prefix holds data (`certain`),
 * or may (too many other keys to look through): Redis lost the marker (a restart without its data,
 * an eviction) and no bot has written it again yet. A reader cannot tell which keys to read, and
 * does not guess.
 */
export class RedisShardsUnknownError extends CountersignError {
  override readonly name = 'RedisShardsUnknownError';
  readonly code = ErrorCode.RedisShardsUnknown;
  readonly marker: string;
  readonly certain: boolean;

  constructor({ marker, certain }: { marker: string; certain: boolean }) {
    super(`${marker}, the shard count the bot records, is missing although this Redis ${certain ? 'holds' : 'may hold'} its data: set COUNTERSIGN_REDIS_SHARDS to the bot's count`);
    this.marker = marker;
    this.certain = certain;
  }
}
