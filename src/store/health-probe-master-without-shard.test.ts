import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { healthReply } from '../runtime/health-check.js';
import { openClusterScene, placeOnMasterWithoutShard, useRedisCluster } from './cluster-scene.test-support.js';
import { createRedisStore } from './redis-store.js';

/**
 * redis-write-probe.ts probes only the masters that hold one of the bot's shards. But the bot also
 * writes keys outside every shard: the shard-count marker (`<prefix>shards`, SET NX GET before the
 * first write and every minute) and the delivery dedupe's untagged `once:` keys (spread over the
 * whole cluster). With fewer shards than masters (COUNTERSIGN_REDIS_SHARDS accepts 1–1024 whatever
 * the cluster's size), a master that holds no shard but does hold those keys is never probed: when
 * it refuses every write (NOREPLICAS, OOM), the bot's writes there fail while /healthz answers 200.
 */
describe('/healthz on a Redis Cluster with fewer shards than masters', () => {
  const cluster = useRedisCluster();

  it('is 503 when the master holding no shard (but the bot\'s once: keys and shard marker) refuses writes', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins } = scene;
    // A prefix whose shard-count marker lives on another master than the one shard, and a delivery id whose once: key lives on that master too.
    const { keyPrefix, uncovered: refusing, deliveryId } = placeOnMasterWithoutShard(scene, 'test:probe-uncovered');

    const store = createRedisStore({ target, keyPrefix, shards: 1 });
    try {
      expect(await store.claimOnce([`warm-up:${randomUUID()}`], 60_000)).toBe(true);
      expect((await healthReply(store)).status).toBe(200);
      const admin = admins.get(refusing) as Redis;
      await admin.config('SET', 'min-replicas-to-write', '1');
      try {
        // The bot's own write there (a Slack event's delivery dedupe) is refused...
        const write = await store.claimOnce([deliveryId], 60_000).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(write).toBeInstanceOf(Error);
        expect((write as Error).message).toMatch(/^NOREPLICAS\b/);
        // ...yet /healthz says the bot is fine.
        const reply = await healthReply(store);
        expect(reply.status, reply.body).toBe(503);
      } finally {
        await admin.config('SET', 'min-replicas-to-write', '0');
      }
    } finally {
      await store.close();
      scene.close();
    }
  });
});
