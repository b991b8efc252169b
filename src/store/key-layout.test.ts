import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
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
});
