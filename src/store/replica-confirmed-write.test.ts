import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { defaultReplicasToWaitFor, onlineReplicas, replicasRequired } from './replica-confirmed-write.js';

describe('replicas a call waits for', () => {
  it('defaults to one behind Sentinel or in a Cluster, none for one server', () => {
    const lazy = { lazyConnect: true } as const;
    const clients = [new Redis({ ...lazy, sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'primary' }), new Cluster([{ host: '127.0.0.1', port: 7000 }], lazy), new Redis('redis://127.0.0.1:6379', lazy)];
    try {
      expect(clients.map((client) => defaultReplicasToWaitFor(client))).toEqual([1, 1, 0]);
    } finally {
      for (const client of clients) client.disconnect();
    }
  });

  it('counts the replicas a primary streams to (ROLE), and never requires more than those', () => {
    expect(onlineReplicas(['master', 3129659, [['127.0.0.1', '9001', '3129242'], ['127.0.0.1', '9002', '3129543']]])).toBe(2);
    expect(onlineReplicas(['master', 0, []])).toBe(0);
    expect(onlineReplicas(['slave', '127.0.0.1', 9000, 'connected', 3167038])).toBeUndefined();
    expect(onlineReplicas(undefined)).toBeUndefined();
    expect(replicasRequired({ wanted: 1, online: 0 })).toBe(0);
    expect(replicasRequired({ wanted: 2, online: 1 })).toBe(1);
    expect(replicasRequired({ wanted: 1, online: 3 })).toBe(1);
    // ROLE refused (an ACL without it): all of them.
    expect(replicasRequired({ wanted: 2, online: undefined })).toBe(2);
  });
});

describe.each([
  ['one server', () => ({ url: inject('redisUrl') })],
  ['a cluster', () => ({ target: parseRedisTarget(inject('redisClusterUrl')) as RedisTarget })],
])('a marker waited for on %s without replicas', (_name, connection) => {
  it('is written on the primary that owns the thread, and the call starts at once (a primary left alone after a failover has no replica to wait for)', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    // Longer than the test's timeout: a wait for a replica that is not there would fail the test.
    const store = createRedisStore({ ...connection(), keyPrefix, waitReplicas: 1, waitTimeoutMs: 60_000 });
    const keys = createRedisKeys({ keyPrefix });
    try {
      // Threads in different channels land on different shards (and, in the cluster, nodes).
      const threadKeys = Array.from({ length: 6 }, (_unused, index) => `T1:C${index}:1700000000.00010${index}`);
      expect(new Set(threadKeys.map((threadKey) => keys.ofThread(threadKey).index)).size).toBeGreaterThan(1);
      for (const threadKey of threadKeys) {
        const token = (await store.tryLock(threadKey, 30_000))!;
        await store.markExecuting({ fence: { threadKey, token }, toolCallId: 'call-1', marker: { toolName: 'restart', input: {}, startedAt: 1 }, ttlMs: 60_000, audit: [] });
        expect([...(await store.executingCalls(threadKey)).keys()]).toEqual(['call-1']);
        // A stale token is still refused on the waited-for path.
        await expect(store.markExecuting({ fence: { threadKey, token: '1' }, toolCallId: 'call-2', marker: { toolName: 'restart', input: {}, startedAt: 1 }, ttlMs: 60_000, audit: [] })).rejects.toMatchObject({ name: 'FencedError' });
      }
    } finally {
      await store.close();
    }
  }, 20_000);
});
