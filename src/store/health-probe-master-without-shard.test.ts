import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterHandle } from '../../test/helpers/redis-cluster.js';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { healthReply } from '../runtime/health-check.js';
import { clusterSlot, createRedisKeys } from './redis-keys.js';
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
  let cluster: RedisClusterHandle;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('is 503 when the master holding no shard (but the bot\'s once: keys and shard marker) refuses writes', async () => {
    const target = parseRedisTarget(cluster.url) as Extract<RedisTarget, { kind: 'cluster' }>;
    const auth = { ...(target.username && { username: target.username }), ...(target.password && { password: target.password }) };
    const router = new Cluster(
      target.nodes.map(({ host, port }) => ({ host, port })),
      { redisOptions: auth },
    );
    const admins = new Map(target.nodes.map(({ host, port }) => [`${host}:${port}`, new Redis(port, host, auth)]));
    await router.ping();
    // Redis Cluster's hash tag rule: the text between the first `{` and the next `}`, if not empty; else the whole key.
    const ownerOf = (key: string) => {
      const open = key.indexOf('{');
      const close = open === -1 ? -1 : key.indexOf('}', open + 1);
      const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
      return router.slots[clusterSlot(hashed)]?.[0] as string;
    };
    // A prefix whose shard-count marker lives on another master than the one shard.
    let keyPrefix = '';
    let refusing = '';
    for (;;) {
      keyPrefix = `test:probe-uncovered:${randomUUID()}:`;
      const keys = createRedisKeys({ keyPrefix, shards: 1 });
      const shardOwner = ownerOf(keys.shard(0).step('x'));
      refusing = ownerOf(keys.shardCountMarker());
      if (refusing !== shardOwner) break;
    }
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    // A delivery id whose once: key lives on that master too.
    let deliveryId = '';
    do deliveryId = `event:${randomUUID()}`;
    while (ownerOf(keys.once(deliveryId)) !== refusing);

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
      router.disconnect();
      for (const admin of admins.values()) admin.disconnect();
    }
  });
});
