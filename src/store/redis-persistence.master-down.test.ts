import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openClusterScene, useRedisCluster } from './cluster-scene.test-support.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';

/**
 * A Cluster master holding none of the bot's shards that goes down (cluster-require-full-coverage no: the
 * shard masters keep serving) must not stop tool calls or Deny/Revoke in the shards whose masters are up.
 * After 1a8b5aa the persistence read asked every master of the slot map and threw when one had no
 * connection, and every executing marker and withdrawal awaited that read (fixed in 2d0711f); the shards'
 * waits now read only their own primaries (b8c36a6), the other masters only for the /healthz warnings.
 */
describe('a Cluster master holding no shard goes down (cluster-require-full-coverage no)', () => {
  const cluster = useRedisCluster({ startTimeoutMs: 30_000 });

  it('still starts tool calls on the shard whose master is up', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins, ownerOf } = scene;
    const threadKey = 'T1:C1:1700000000.000100';
    let keyPrefix = '';
    let shardOwner = '';
    for (let tries = 0; ; tries += 1) {
      if (tries > 1000) throw new Error(`no prefix: ${JSON.stringify([ownerOf(createRedisKeys({ keyPrefix, shards: 1 }).ofThread(threadKey).executing(threadKey)), ownerOf(createRedisKeys({ keyPrefix, shards: 1 }).shardCountMarker()), ownerOf(createRedisKeys({ keyPrefix, shards: 1 }).layoutMarker()), scene.slotCount()])}`);
      keyPrefix = `test:master-down:${randomUUID()}:`;
      const keys = createRedisKeys({ keyPrefix, shards: 1 });
      shardOwner = ownerOf(keys.ofThread(threadKey).executing(threadKey));
      if (ownerOf(keys.shardCountMarker()) === shardOwner) break;
    }
    for (const admin of admins.values()) await admin.config('SET', 'cluster-require-full-coverage', 'no');
    const layoutOwner = ownerOf(createRedisKeys({ keyPrefix, shards: 1 }).layoutMarker());
    const otherIndex = cluster().nodes.findIndex((node) => `127.0.0.1:${node.port}` !== shardOwner && `127.0.0.1:${node.port}` !== layoutOwner);
    const other = cluster().nodes[otherIndex]!;

    // risksMaxAgeMs 0: what /healthz does once its minute-old read is due again.
    const store = createRedisStore({ target, keyPrefix, shards: 1, risksMaxAgeMs: 0, waitTimeoutMs: 500 });
    try {
      const token = (await store.tryLock(threadKey, 60_000))!;
      const fence = { threadKey, token };
      const marking = (toolCallId: string) => ({ fence, toolCallId, marker: { toolName: 'restart', input: {}, startedAt: Date.now() }, ttlMs: 60_000, audit: [] });
      expect(await store.markExecuting(marking('call-0'))).toBe('marked');

      // A master that holds none of the bot's shards dies (no replica: its slots stay uncovered).
      await other.stop({ signal: 'SIGKILL' });
      // The shard's master is unaffected and takes writes.
      expect(await store.fenceState(fence)).toBe('current');
      // A /healthz check reads its warnings again: the dead master gets its own, and fails nothing.
      expect((await store.risks()).map((risk) => risk.code)).toContain('redis-master-unread');

      const outcome = await store.markExecuting(marking('call-1')).then(
        (result) => result,
        (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`,
      );
      expect(outcome, 'a tool call on a healthy shard is refused because an unrelated master is down').toBe('marked');
    } finally {
      await store.close();
      scene.close();
    }
  }, 60_000);
});
