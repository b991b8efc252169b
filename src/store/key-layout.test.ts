import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { connectToRedis } from './connect-to-redis.js';
import { RedisShardsMismatchError, shardCountGuard } from './key-layout.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';

describe('the key layout', () => {
  it('refuses to work with a shard count other than the one the data was written with, naming the variable', async () => {
    const keyPrefix = `layout-${randomUUID()}:`;
    const first = createRedisStore({ url: inject('redisUrl'), keyPrefix, shards: 16 });
    const other = createRedisStore({ url: inject('redisUrl'), keyPrefix, shards: 8 });
    const same = createRedisStore({ url: inject('redisUrl'), keyPrefix, shards: 16 });
    try {
      expect(await first.enqueueWork('T1:C1:1.1', 'item', 30_000)).toBeDefined();
      // Another count would look for the thread's work in another shard and find nothing.
      await expect(other.busyThreads({ limit: 10 })).rejects.toMatchObject({ code: 'countersign_redis_shards_mismatch', configured: 8, stored: 16, message: expect.stringContaining('COUNTERSIGN_REDIS_SHARDS is 8') });
      expect(await same.busyThreads({ limit: 10 })).toEqual(['T1:C1:1.1']);
    } finally {
      await Promise.all([first.close(), other.close(), same.close()]);
    }
  });

  it('writes the shard count again once Redis lost it, at the latest a recheck interval later, and refuses another count found then', async () => {
    const keys = createRedisKeys({ keyPrefix: `layout-${randomUUID()}:`, shards: 32 });
    const redis = await connectToRedis(inject('redisUrl'));
    const clock = { now: 1_000 };
    const guard = shardCountGuard({ redis, keys, recheckMs: 60_000, now: () => clock.now });
    try {
      await guard();
      expect(await redis.get(keys.shardCountMarker())).toBe('32');
      // Lost (evicted, flushed) without the connection dropping: no round trip within the interval...
      await redis.del(keys.shardCountMarker());
      clock.now += 59_999;
      await guard();
      expect(await redis.get(keys.shardCountMarker())).toBeNull();
      // ...and written again by the first write after it.
      clock.now += 1;
      await guard();
      expect(await redis.get(keys.shardCountMarker())).toBe('32');
      // Meanwhile a process with another count wrote its own: refused, as at start-up, every time.
      await redis.set(keys.shardCountMarker(), '16');
      clock.now += 60_000;
      await expect(guard()).rejects.toBeInstanceOf(RedisShardsMismatchError);
      await expect(guard()).rejects.toMatchObject({ configured: 32, stored: 16 });
    } finally {
      redis.disconnect();
    }
  });
});
