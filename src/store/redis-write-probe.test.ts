import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { startRedisCluster, type RedisClusterHandle } from '../../test/helpers/redis-cluster.js';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { healthReply } from '../runtime/health-check.js';
import { prefixHasKeys } from './prefix-has-keys.js';
import { readRedisAudit } from './read-redis-audit.js';
import { createRedisKeys, isHealthProbeKey } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { HEALTH_PROBE_REUSE_MS } from './shared-health-probe.js';

/**
 * `/healthz` proves Redis takes a write (`redis-write-probe.ts`): a SET with a short expiry, on a key
 * of the prefix that is no data. The scans that look for data (the audit CLI's "data but no shard
 * count" check, the legacy-key migration) must not take it for data.
 */
describe("the health check's write", () => {
  it('is one key of its own under the prefix, with a short expiry, that no scan for data counts', async () => {
    const keyPrefix = `test:write-probe:${randomUUID()}:`;
    const url = inject('redisUrl');
    // Every check probes (no success kept a second), so the second check below really writes again.
    const store = createRedisStore({ url, keyPrefix, healthProbeReuseMs: 0 });
    const redis = new Redis(url);
    try {
      expect((await healthReply(store)).status).toBe(200);
      const written = await redis.keys(`${keyPrefix}*`);
      expect(written).toHaveLength(1);
      const [probe] = written as [string];
      expect(isHealthProbeKey(keyPrefix, probe)).toBe(true);
      expect(await redis.pttl(probe)).toBeGreaterThan(0);
      expect(await redis.pttl(probe)).toBeLessThanOrEqual(60_000);
      // A probe alone is not data: the audit CLI reads (nothing) instead of refusing to guess the shard count.
      expect(await prefixHasKeys({ redis, keyPrefix })).toBe('none');
      await expect(readRedisAudit({ target: { kind: 'standalone', url }, keyPrefix, logger: pino({ level: 'silent' }), query: { sinceMs: 0 } })).resolves.toEqual([]);
      // Another check of the same process writes the same key again, no other.
      await healthReply(store);
      expect(await redis.keys(`${keyPrefix}*`)).toEqual([probe]);
      // The store's first command moves legacy keys: the probe's is left as it is.
      await store.claimOnce(['probe-neighbour'], 60_000);
      expect(await redis.exists(probe)).toBe(1);
      expect(await prefixHasKeys({ redis, keyPrefix })).toBe('some');
    } finally {
      await store.close();
      redis.disconnect();
    }
  });

  it('names no data key', () => {
    const keyPrefix = 'countersign:';
    const keys = createRedisKeys({ keyPrefix });
    const shard = keys.shard(3);
    expect(isHealthProbeKey(keyPrefix, shard.healthProbe('p1'))).toBe(true);
    for (const name of [shard.thread('T1:C1:1.1'), shard.step('health-probe:x'), shard.audit(), keys.once('health-probe:x'), keys.layoutMarker(), `${keyPrefix}health-probe:x`, `other:${shard.healthProbe('p1')}`]) {
      expect(isHealthProbeKey(keyPrefix, name), name).toBe(false);
    }
  });
});

describe('/healthz on a Redis Cluster with one master refusing writes', () => {
  let cluster: RedisClusterHandle;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('is 503 whichever master it is: every master is written to', async () => {
    const target = parseRedisTarget(cluster.url) as Extract<RedisTarget, { kind: 'cluster' }>;
    const store = createRedisStore({ target, keyPrefix: `test:write-probe-cluster:${randomUUID()}:` });
    const admins = target.nodes.map(({ host, port }) => new Redis(port, host, { ...(target.username && { username: target.username }), ...(target.password && { password: target.password }) }));
    try {
      expect((await healthReply(store)).status).toBe(200);
      for (const admin of admins) {
        await admin.config('SET', 'min-replicas-to-write', '1');
        try {
          // A success answers the checks of the next second (shared-health-probe.ts): the refusal shows within it.
          const reply = await vi.waitFor(
            async () => {
              const answer = await healthReply(store);
              expect(answer.status, `master on port ${admin.options.port}`).toBe(503);
              return answer;
            },
            { timeout: HEALTH_PROBE_REUSE_MS + 2_000, interval: 50 },
          );
          expect(JSON.parse(reply.body)).toEqual({ status: 'unavailable', store: 'redis', redis: 'refuses-writes', reason: 'Redis refuses writes: NOREPLICAS' });
        } finally {
          await admin.config('SET', 'min-replicas-to-write', '0');
        }
      }
      expect((await healthReply(store)).status).toBe(200);
    } finally {
      await store.close();
      for (const admin of admins) admin.disconnect();
    }
  });
});
