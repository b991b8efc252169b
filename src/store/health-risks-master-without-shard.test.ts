import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { healthReply } from '../runtime/health-check.js';
import { openClusterScene, placeOnMasterWithoutShard, useRedisCluster } from './cluster-scene.test-support.js';
import { createRedisStore } from './redis-store.js';

/**
 * c64511b: "the bot's untagged keys (once: delivery dedupe, the <prefix>shards marker) hash anywhere, so a
 * master holding no shard takes the bot's writes too". /healthz now probes writes on every master, but its
 * warnings (risks(): redis-evicts-keys, redis-not-durable) are still read from the shard masters only
 * (redis-persistence.ts routes INFO by `keys.shards()`). A master holding the bot's once: keys but no shard
 * that evicts keys (maxmemory-policy allkeys-lru) was never warned of: /healthz and the start-up log said nothing,
 * and the delivery dedupe keys there can be dropped.
 */
describe('/healthz warnings on a Redis Cluster with fewer shards than masters', () => {
  const cluster = useRedisCluster();

  it('name an eviction policy of the master holding the bot\'s once: keys but no shard', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins, ownerOf } = scene;
    const { keyPrefix, keys, uncovered: evicting, deliveryId } = placeOnMasterWithoutShard(scene, 'test:risks-uncovered');

    const shardOwner = ownerOf(keys.shard(0).step('x'));
    // CONTROL=shard: the same policy on the shard's master is warned of (the test's set-up is right).
    const admin = admins.get(process.env.CONTROL === 'shard' ? shardOwner : evicting) as Redis;
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const store = createRedisStore({ target, keyPrefix, shards: 1 });
    try {
      // The start-up warnings are read before the client has its slot map.
      expect((await store.risks()).map((risk) => risk.code)).toContain('redis-evicts-keys');
      // The bot's delivery dedupe writes there: its keys may be evicted.
      expect(await store.claimOnce([deliveryId], 60_000)).toBe(true);
      expect(await (admins.get(evicting) as Redis).exists(keys.once(deliveryId))).toBe(1);
      const reply = await healthReply(store);
      expect(reply.status, reply.body).toBe(200);
      expect(JSON.parse(reply.body).warnings ?? [], reply.body).toContain('redis-evicts-keys');
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await store.close();
      scene.close();
    }
  });
});
