import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { healthReply } from '../runtime/health-check.js';
import { openClusterScene, placeBesideMasterWithoutShard, useRedisCluster, waitFor } from './cluster-scene.test-support.js';
import { infoField } from './redis-persistence.js';
import { createRedisStore } from './redis-store.js';
import type { StateStore } from './state-store.js';

const warningsOf = async (store: StateStore): Promise<string[]> => {
  const reply = await healthReply(store);
  expect(reply.status, reply.body).toBe(200);
  return JSON.parse(reply.body).warnings ?? [];
};

/** The INFO and CLUSTER SLOTS the node has served, from one INFO commandstats (counted in the next one). */
const callsOf = async (admin: Redis): Promise<{ info: number; slots: number }> => {
  const stats = await admin.info('commandstats');
  const calls = (command: string) => Number(/calls=(\d+)/.exec(infoField(stats, `cmdstat_${command}`) ?? '')?.[1] ?? 0);
  return { info: calls('info'), slots: calls('cluster|slots') };
};

/**
 * A master holding no shard that was down names itself in /healthz (`redis-master-unread`). Once it was back,
 * the warning stayed while the bot was idle: the Cluster client drops a node whose connection ended from
 * its pool and adds it again only when something reads the slot map (a redirection of a store call), so the
 * settings read kept finding the master "not connected"; and the read that named it was kept for a minute.
 */
describe('/healthz after a Cluster master holding no shard comes back while the bot is idle', () => {
  const cluster = useRedisCluster({ startTimeoutMs: 30_000 });

  it('stops naming it within two checks, and a healthy check then asks no master for its settings or the slot map', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins } = scene;
    const threadKey = 'T1:C1:1700000000.000100';
    const { keyPrefix, other, otherAddress } = await placeBesideMasterWithoutShard(scene, cluster(), { label: 'test:master-recovered', threadKey });
    const otherAdmin = admins.get(otherAddress) as Redis;
    // Its admin connection retries while the master is down; unheard, ioredis prints each refusal.
    otherAdmin.on('error', () => {});
    // The default max age of the settings read (a minute): what a deployed bot's /healthz keeps.
    let store: StateStore | undefined;
    try {
      await other.restart({
        signal: 'SIGKILL',
        whileDown: async () => {
          store = createRedisStore({ target, keyPrefix, shards: 1, healthProbeReuseMs: 0 });
          const token = (await store.tryLock(threadKey, 60_000))!;
          expect(await store.markExecuting({ fence: { threadKey, token }, toolCallId: 'call-0', marker: { toolName: 'restart', input: {}, startedAt: Date.now() }, ttlMs: 60_000, audit: [] })).toBe('marked');
          expect(await warningsOf(store)).toContain('redis-master-unread');
        },
      });
      const recovered = store as StateStore;
      // The master is back and serves its slots again (until it has rejoined, it answers CLUSTERDOWN); the bot makes no call meanwhile.
      await waitFor(async () => ((await otherAdmin.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok'), 'the master to rejoin');
      const first = await warningsOf(recovered);
      const second = first.includes('redis-master-unread') ? await warningsOf(recovered) : first;
      expect(second, `after the master came back: ${JSON.stringify(first)}, then ${JSON.stringify(second)}`).not.toContain('redis-master-unread');

      // The ordinary healthy check: the settings read is kept (no INFO), and the slot map is not read again.
      const before = await Promise.all([...admins.values()].map(callsOf));
      for (let check = 0; check < 3; check += 1) expect(await warningsOf(recovered)).not.toContain('redis-master-unread');
      const after = await Promise.all([...admins.values()].map(callsOf));
      // Each node's one INFO since is the count's own, sent above.
      expect(after).toEqual(before.map(({ info, slots }) => ({ info: info + 1, slots })));
    } finally {
      await store?.close();
      scene.close();
    }
  }, 60_000);
});
