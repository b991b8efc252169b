import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { openClusterScene, useRedisCluster } from './cluster-scene.test-support.js';
import { clusterSlot, createRedisKeys } from './redis-keys.js';
import { healthReply } from '../runtime/health-check.js';
import { createRedisStore } from './redis-store.js';

/**
 * A regression of 8acf869, found in review: readPrimaryPersistence now sends its routing EXISTS through execRouted and throws the
 * EXISTS's error when it stands. While one shard's slot is being migrated (a reshard in progress, or one left
 * unfinished until `redis-cli --cluster fix`), the EXISTS of that shard's ready-threads key (usually absent:
 * an empty list) is answered -ASK by the owner at every send; execRouted "handles" ASK by refreshing the slot
 * map (which still gives the slot to the owner) and resending, so the ASK stands and is thrown. The settings
 * read (waitsForDisk) then fails, and with it EVERY executing marker (every tool call) and every Deny/Revoke
 * in EVERY shard, not only the migrating one. Before 8acf869 the EXISTS reply was dropped and INFO was
 * answered by the slot's owner, the shard's real primary.
 */
describe('an executing marker in a shard whose slot is stable, while another shard\'s slot migrates', () => {
  const cluster = useRedisCluster();

  it('is written (the primaries\' settings read does not fail on the other shard\'s -ASK)', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins, ownerOf } = scene;
    const keyPrefix = `test:persistence-migrating:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix, shards: 2 });
    const migratingSlot = clusterSlot(keys.shard(0).ready().match(/\{(.*?)\}/)![1]!);
    const owner = ownerOf(keys.shard(0).ready());
    const other = [...admins.keys()].find((node) => node !== owner) as string;
    const ownerAdmin = admins.get(owner) as Redis;
    const otherAdmin = admins.get(other) as Redis;
    const ownerId = String(await ownerAdmin.call('CLUSTER', 'MYID'));
    const otherId = String(await otherAdmin.call('CLUSTER', 'MYID'));
    // A thread of shard 1 (its slot stable, untouched by the reshard).
    let channel = 0;
    while (keys.ofThread(`T1:C${channel}:1700000000.000100`).index !== 1) channel += 1;
    const threadKey = `T1:C${channel}:1700000000.000100`;
    const [team, chan, ts] = threadKey.split(':') as [string, string, string];
    if (process.env.CONTROL !== 'stable') {
      await otherAdmin.call('CLUSTER', 'SETSLOT', String(migratingSlot), 'IMPORTING', ownerId);
      await ownerAdmin.call('CLUSTER', 'SETSLOT', String(migratingSlot), 'MIGRATING', otherId);
    }
    const store = createRedisStore({ target, keyPrefix, shards: 2 });
    try {
      const claim = await store.enqueueWork(threadKey, JSON.stringify({ kind: 'resume', stepId: 'x' }), 30_000);
      expect(claim).toBeDefined();
      const fence = { threadKey, token: claim!.token };
      const toolCallId = 'call-0';
      const outcome = await store
        .markExecuting({
          fence,
          toolCallId,
          marker: { toolName: 'restart', input: {}, startedAt: Date.now() },
          ttlMs: 60_000,
          audit: [{ type: 'tool-started', teamId: team, channel: chan, threadTs: ts, toolName: 'restart', toolCallId, input: {}, inputHash: 'h', basis: { kind: 'no-approval-needed' } } as const],
        })
        .then(
          (value) => value,
          (error: unknown) => error,
        );
      // /healthz meanwhile, for the failure message (a failed settings read is named redis-primaries-unread).
      const health = await healthReply(store);
      expect(outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : outcome, `a tool call in a stable shard refused because another shard's slot is migrating (/healthz meanwhile: ${health.status} ${health.body})`).toBe('marked');
    } finally {
      await ownerAdmin.call('CLUSTER', 'SETSLOT', String(migratingSlot), 'STABLE');
      await otherAdmin.call('CLUSTER', 'SETSLOT', String(migratingSlot), 'STABLE');
      await store.close();
      scene.close();
    }
  }, 60_000);
});
