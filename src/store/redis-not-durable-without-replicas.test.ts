import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { healthReply } from '../runtime/health-check.js';
import { createRedisStore } from './redis-store.js';

/**
 * Reviewer test. `redis-not-durable` is withheld whenever COUNTERSIGN_REDIS_WAIT_REPLICAS is ≥ 1 (the
 * default in a Cluster and behind Sentinel), but the marker's wait is capped at the replicas the primary
 * streams to (`replicasRequired`): with none connected, a call starts on a marker that only the
 * primary's memory holds. A snapshot-only Redis (the default `appendonly no`) with no replica (a small
 * self-hosted Cluster, a managed cache with 0 replicas, or a primary whose replica is down) then runs an
 * approved call twice after a restart, and neither the start-up log nor /healthz says so.
 */
describe.each([
  ['one server, COUNTERSIGN_REDIS_WAIT_REPLICAS=1', () => ({ url: inject('redisUrl'), waitReplicas: 1 })],
  ['a Cluster (default wait: 1 replica)', () => ({ target: parseRedisTarget(inject('redisClusterUrl')) as RedisTarget })],
])('a snapshot-only Redis with no replica connected: %s', (_name, connection) => {
  it('starts a call on a marker no replica and no file has, and warns of it', async () => {
    const store = createRedisStore({ ...connection(), keyPrefix: `not-durable:${randomUUID()}:`, waitTimeoutMs: 60_000 });
    try {
      const threadKey = `T1:C1:${randomUUID()}`;
      const token = (await store.tryLock(threadKey, 30_000))!;
      // The call starts at once: nothing but the primary's memory has its marker.
      await expect(store.markExecuting({ fence: { threadKey, token }, toolCallId: 'call-1', marker: { toolName: 'restart', input: {}, startedAt: 1 }, ttlMs: 60_000, audit: [] })).resolves.toBe('marked');
      // ...so the store names the risk, as /healthz does.
      expect((await store.risks()).map((risk) => risk.code)).toContain('redis-not-durable');
      expect(JSON.parse((await healthReply(store)).body).warnings ?? []).toContain('redis-not-durable');
    } finally {
      await store.close();
    }
  }, 30_000);
});
