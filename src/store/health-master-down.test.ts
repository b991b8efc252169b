import { describe, expect, it } from 'vitest';
import { healthReply } from '../runtime/health-check.js';
import { openClusterScene, placeBesideMasterWithoutShard, useRedisCluster } from './cluster-scene.test-support.js';
import { createRedisStore } from './redis-store.js';

/**
 * Review of 2d0711f: "a master holding no shard that is down (cluster-require-full-coverage no) no longer
 * refuses every tool call"; README (Redis persistence): "one that is down or does not answer within 2 s is
 * named instead (`redis-master-unread`) ... a primary holding none (down ...) fails no call", and the /healthz
 * paragraph lists `redis-master-unread` among a 200's warnings. But /healthz's write probe (c64511b) writes to
 * that master first and answers 503 "Redis cannot be reached": the warning can never be shown for a down
 * master, and every process is reported unhealthy (taken out of the load balancer / restarted) while its tool
 * calls run.
 */
describe('/healthz with a Cluster master holding no shard down (cluster-require-full-coverage no)', () => {
  const cluster = useRedisCluster({ startTimeoutMs: 30_000 });

  it('answers 200 naming the master (redis-master-unread) while the shard\'s calls still run', async () => {
    const scene = await openClusterScene(cluster());
    const { target } = scene;
    const threadKey = 'T1:C1:1700000000.000100';
    const { keyPrefix, other } = await placeBesideMasterWithoutShard(scene, cluster(), { label: 'test:master-down-health', threadKey });
    const store = createRedisStore({ target, keyPrefix, shards: 1, risksMaxAgeMs: 0, healthProbeReuseMs: 0 });
    try {
      const token = (await store.tryLock(threadKey, 60_000))!;
      const fence = { threadKey, token };
      const marking = (toolCallId: string) => ({ fence, toolCallId, marker: { toolName: 'restart', input: {}, startedAt: Date.now() }, ttlMs: 60_000, audit: [] });
      expect(await store.markExecuting(marking('call-0'))).toBe('marked');
      expect((await healthReply(store)).status).toBe(200);

      await other.stop({ signal: 'SIGKILL' });
      // The bot's calls on its shard still run (2d0711f)...
      expect(await store.markExecuting(marking('call-1'))).toBe('marked');
      // ...and /healthz should say so, naming the dead master as README documents.
      const reply = await healthReply(store);
      expect(reply.status, reply.body).toBe(200);
      expect(JSON.parse(reply.body).warnings, reply.body).toContain('redis-master-unread');
    } finally {
      await store.close();
      scene.close();
    }
  }, 60_000);
});
