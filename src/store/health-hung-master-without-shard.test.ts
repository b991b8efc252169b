import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { healthReply } from '../runtime/health-check.js';
import { openClusterScene, placeBesideMasterWithoutShard, useRedisCluster } from './cluster-scene.test-support.js';
import { infoField } from './redis-persistence.js';
import { createRedisStore } from './redis-store.js';

/** How long a check may take with a master it does not wait for: far under the 2 s it waited. */
const FAST_CHECK_MS = 1_000;

/**
 * A hung master the bot's calls do not need (holding no shard nor marker: SIGSTOPped, its connection open)
 * is given up on after 2 s by /healthz's write probe, and the check answers 200. But every check waited those
 * 2 s again, for a master that had not answered the last one: /healthz took 2 s for as long as it hung.
 */
describe('/healthz with a hung Cluster master holding no shard', () => {
  const cluster = useRedisCluster({ startTimeoutMs: 30_000 });

  it('waits for it once, not at every check, and waits again once it answers', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins } = scene;
    const threadKey = 'T1:C1:1700000000.000100';
    // Other nodes mark the hung master failed after the node timeout: its slots uncovered must not stop the cluster (the placement sees to it).
    const { keyPrefix, otherAddress: hung } = await placeBesideMasterWithoutShard(scene, cluster(), { label: 'test:hung-master', threadKey });
    const hungAdmin = admins.get(hung) as Redis;
    const pid = Number(infoField(await hungAdmin.info('server'), 'process_id'));
    const store = createRedisStore({ target, keyPrefix, shards: 1, healthProbeReuseMs: 0 });
    const timedCheck = async () => {
      const startedAt = performance.now();
      const reply = await healthReply(store);
      return { status: reply.status, body: reply.body, ms: Math.round(performance.now() - startedAt) };
    };
    let stopped = false;
    try {
      const token = (await store.tryLock(threadKey, 60_000))!;
      expect(await store.markExecuting({ fence: { threadKey, token }, toolCallId: 'call-0', marker: { toolName: 'restart', input: {}, startedAt: Date.now() }, ttlMs: 60_000, audit: [] })).toBe('marked');
      expect((await timedCheck()).status).toBe(200);

      process.kill(pid, 'SIGSTOP');
      stopped = true;
      // The first check cannot tell a hung master from a slow one: it waits, and answers 200.
      const first = await timedCheck();
      expect(first.status, first.body).toBe(200);
      const later = [await timedCheck(), await timedCheck()];
      expect(later.map(({ status }) => status)).toEqual([200, 200]);
      for (const { ms } of later) expect(ms, `checks after the first (${first.ms} ms): ${later.map((check) => check.ms).join(', ')} ms`).toBeLessThan(FAST_CHECK_MS);

      process.kill(pid, 'SIGCONT');
      stopped = false;
      // Once it answers again it is waited for again: a refusal of its writes is a 503, as for any master.
      await hungAdmin.config('SET', 'min-replicas-to-write', '1');
      try {
        const statuses: number[] = [];
        for (let check = 0; check < 3 && !statuses.includes(503); check += 1) statuses.push((await timedCheck()).status);
        expect(statuses, 'checks after the master answers again and refuses writes').toContain(503);
      } finally {
        await hungAdmin.config('SET', 'min-replicas-to-write', '0');
      }
    } finally {
      if (stopped) process.kill(pid, 'SIGCONT');
      await store.close();
      scene.close();
    }
  }, 60_000);
});
