import type { Cluster, Redis } from 'ioredis';
import { CountersignError, ErrorCode } from '../errors/countersign-error.js';
import { migrateLegacyKeys } from './migrate-legacy-keys.js';
import { MAX_REDIS_SHARDS, type RedisKeys } from './redis-keys.js';

/**
 * Gets the keyspace ready before a store's first command, once per process: the shard count must
 * be the one the data was written with (a process with another count would read and write other
 * keys, and work would go missing without an error), and keys of the untagged layout are moved.
 * A failure is not remembered: the next command tries again (Redis may just have been away).
 */
export function prepareKeyLayout(options: { redis: Redis | Cluster; keys: RedisKeys; keyPrefix: string }): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= prepare(options).catch((error: unknown) => {
      running = undefined;
      throw error;
    });
    return running;
  };
}

async function prepare({ redis, keys, keyPrefix }: { redis: Redis | Cluster; keys: RedisKeys; keyPrefix: string }): Promise<void> {
  const written = await redis.set(keys.shardCountMarker(), String(keys.shardCount), 'NX', 'GET');
  if (written !== null && written !== String(keys.shardCount)) throw new RedisShardsMismatchError({ configured: keys.shardCount, stored: Number(written) });
  await migrateLegacyKeys({ redis, keys, keyPrefix });
}

/**
 * The shard count recorded by the bot's first store command, without recording one: a reader such
 * as `npm run audit` takes the data's count from here, so it reads every shard's stream whatever
 * COUNTERSIGN_REDIS_SHARDS its own shell has. Undefined while no bot has written to this prefix.
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
