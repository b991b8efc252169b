import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { healthReply } from '../runtime/health-check.js';
import { openClusterScene, useRedisCluster } from './cluster-scene.test-support.js';
import { clusterSlot, createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';

/**
 * probe-key-per-master.ts picks, per master, the first `probe.<n>` tag whose slot the slot map gives that
 * master, and keeps it while the slot map does. A slot being migrated (MIGRATING on its owner, IMPORTING on the
 * target: a reshard in progress, or one interrupted and left so until `redis-cli --cluster fix`) stays the
 * owner's in CLUSTER SLOTS, but a key the owner does not hold is answered `-ASK` and written on the target: the
 * probe key of that master (a new process id: never on the owner) was written on the other master at every
 * probe, and the owner never probed. When it refused writes (NOREPLICAS here), the bot's writes there failed
 * while /healthz kept answering 200, not just for the 1 s reuse window.
 */
describe('/healthz on a Redis Cluster whose probe slot is being migrated', () => {
  const cluster = useRedisCluster();

  it('is 503 while the master owning the probe slot refuses writes', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins, ownerOf, ownerOfSlot } = scene;
    const keyPrefix = `test:probe-migrating:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    // The master that holds the bot's shard, and the tag probe-key-per-master.ts gives it (the first probe.<n> it owns).
    const owner = ownerOf(keys.shard(0).step('x'));
    let n = 0;
    while (ownerOfSlot(clusterSlot(`probe.${n}`)) !== owner) n += 1;
    const probeSlot = clusterSlot(`probe.${n}`);
    const other = [...admins.keys()].find((node) => node !== owner) as string;
    const ownerAdmin = admins.get(owner) as Redis;
    const otherAdmin = admins.get(other) as Redis;
    const ownerId = String(await ownerAdmin.call('CLUSTER', 'MYID'));
    const otherId = String(await otherAdmin.call('CLUSTER', 'MYID'));
    // A reshard of that one slot in progress (or left unfinished): the slot map still gives it to `owner`.
    // CONTROL=stable: no migration, and the same test sees the 503.
    if (process.env.CONTROL !== 'stable') {
      await otherAdmin.call('CLUSTER', 'SETSLOT', String(probeSlot), 'IMPORTING', ownerId);
      await ownerAdmin.call('CLUSTER', 'SETSLOT', String(probeSlot), 'MIGRATING', otherId);
    }

    // Every check probes (no success kept a second): a check after the refused write probes again.
    const store = createRedisStore({ target, keyPrefix, shards: 1, healthProbeReuseMs: 0 });
    try {
      expect((await healthReply(store)).status).toBe(200);
      // The first check ran before the client had its slot map (every shard's key then): a second one after it.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await healthReply(store)).status).toBe(200);
      const probeKeysOn = async (admin: Redis, tag: string) => (await admin.keys(`${keyPrefix}{${tag}}:health-probe:*`)).length;
      if (process.env.CONTROL !== 'stable') {
        // The owner answered -ASK for its probe tag: the key is not written on the other master (it was,
        // and the owner was never probed), and the owner is probed under another tag of its own.
        expect(await probeKeysOn(otherAdmin, `probe.${n}`)).toBe(0);
        expect(await probeKeysOn(ownerAdmin, `probe.${n}`)).toBe(0);
        expect(await probeKeysOn(ownerAdmin, 'probe.*')).toBe(1);
      }
      await ownerAdmin.config('SET', 'min-replicas-to-write', '1');
      try {
        // The bot's own writes to that master are refused (a Slack event's delivery dedupe)...
        let deliveryId = '';
        do deliveryId = `event:${randomUUID()}`;
        while (ownerOf(keys.once(deliveryId)) !== owner || clusterSlot(keys.once(deliveryId)) === probeSlot);
        const write = await store.claimOnce([deliveryId], 60_000).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect((write as Error | undefined)?.message).toMatch(/^NOREPLICAS\b/);
        // ...and /healthz must say so.
        const reply = await healthReply(store);
        expect(reply.status, reply.body).toBe(503);
      } finally {
        await ownerAdmin.config('SET', 'min-replicas-to-write', '0');
      }
    } finally {
      await ownerAdmin.call('CLUSTER', 'SETSLOT', String(probeSlot), 'STABLE');
      await otherAdmin.call('CLUSTER', 'SETSLOT', String(probeSlot), 'STABLE');
      await store.close();
      scene.close();
    }
  });
});
