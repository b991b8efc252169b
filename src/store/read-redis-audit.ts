import type { Logger } from 'pino';
import type { StoredAuditEvent } from '../audit/audit-event.js';
import type { RedisTarget } from '../config/redis-target.js';
import { connectToRedis } from './connect-to-redis.js';
import { RedisShardsMismatchError, RedisShardsUnknownError, readStoredShardCount } from './key-layout.js';
import { prefixHasKeys } from './prefix-has-keys.js';
import { createRedisAuditLog } from './redis-audit-log.js';
import { createRedisKeys } from './redis-keys.js';

/**
 * One read of the audit trail for a person at a terminal: connects with short timeouts, reads the
 * window and disconnects, so the CLI needs no Redis client of its own.
 *
 * The shard count is the one the data was written with (`<prefix>shards`): a reader with another
 * count reads other streams, and the trail would come back shorter with nothing to say so. `shards`
 * (COUNTERSIGN_REDIS_SHARDS) is only needed where no bot has recorded a count; if it disagrees with
 * the recorded one, the read fails naming both, as a bot's store does. Where none is recorded but
 * the prefix holds data, the read fails too (`RedisShardsUnknownError`) unless `shards` is given.
 */
export async function readRedisAudit(options: {
  target: RedisTarget;
  keyPrefix: string;
  shards?: number;
  logger: Logger;
  query: { sinceMs: number; untilMs?: number; limit?: number };
}): Promise<StoredAuditEvent[]> {
  const redis = await connectToRedis(options.target);
  try {
    const keys = createRedisKeys({ keyPrefix: options.keyPrefix });
    const stored = await readStoredShardCount({ redis, keys });
    if (stored !== undefined && options.shards !== undefined && options.shards !== stored) {
      throw new RedisShardsMismatchError({ configured: options.shards, stored });
    }
    // The marker is gone but data is there (Redis lost it, and no bot has written it again yet):
    // reading with a default count could print a shorter trail with nothing to say so.
    if (stored === undefined && options.shards === undefined) {
      const data = await prefixHasKeys({ redis, keyPrefix: options.keyPrefix });
      if (data !== 'none') throw new RedisShardsUnknownError({ marker: keys.shardCountMarker(), certain: data === 'some' });
    }
    const shards = stored ?? options.shards;
    return await createRedisAuditLog({ redis, keyPrefix: options.keyPrefix, ...(shards !== undefined && { shards }), logger: options.logger }).read(options.query);
  } finally {
    redis.disconnect();
  }
}
