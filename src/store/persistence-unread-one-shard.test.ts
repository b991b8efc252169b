import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { openClusterScene, useRedisCluster } from './cluster-scene.test-support.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';

/**
 * Every key but those ending in `-threads` (the shards' `ready-threads` and `busy-threads`): an ACL that
 * refuses the EXISTS of `ready-threads` that routes the read of a shard's primary's settings, and nothing
 * an executing marker's script touches. Redis's globs have no negation, hence one pattern per last letter.
 */
const ALL_BUT_THREADS_LISTS = ['~*[^s]', '~*[^d]s', '~*[^a]ds', '~*[^e]ads', '~*[^r]eads', '~*[^h]reads', '~*[^t]hreads', '~*[^-]threads'];

/**
 * The settings of each shard's primary decide how that shard's executing markers and Deny/Revoke wait
 * (`waitsForDisk`). They were read as one, over every shard: a primary whose settings could not be read
 * refused the markers (every tool call) of every shard, not only of the shards it holds. A shard whose
 * primary's settings are unknown must still refuse its own markers (whether they must wait for the
 * append-only file is not known), and only those.
 */
describe("a shard whose primary's settings cannot be read", () => {
  const cluster = useRedisCluster({ startTimeoutMs: 30_000 });

  it('refuses its own executing markers only: the other shards still start calls', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins, ownerOf } = scene;
    const user = target.username as string;
    let keyPrefix = '';
    let keys = createRedisKeys({ keyPrefix, shards: 2 });
    for (;;) {
      keyPrefix = `test:persistence-unread-shard:${randomUUID()}:`;
      keys = createRedisKeys({ keyPrefix, shards: 2 });
      if (ownerOf(keys.shard(0).ready()) !== ownerOf(keys.shard(1).ready())) break;
    }
    const threadOf = (shard: number) => {
      let channel = 0;
      while (keys.ofThread(`T1:C${channel}:1700000000.000100`).index !== shard) channel += 1;
      return `T1:C${channel}:1700000000.000100`;
    };
    const unreadThread = threadOf(0);
    const readThread = threadOf(1);
    const unreadAdmin = admins.get(ownerOf(keys.shard(0).ready())) as Redis;

    // risksMaxAgeMs 0: what /healthz does once its minute-old read is due again.
    const store = createRedisStore({ target, keyPrefix, shards: 2, risksMaxAgeMs: 0, waitTimeoutMs: 500 });
    try {
      const fenceOf = async (threadKey: string) => ({ threadKey, token: (await store.tryLock(threadKey, 60_000)) as string });
      const unreadFence = await fenceOf(unreadThread);
      const readFence = await fenceOf(readThread);
      const marking = (fence: { threadKey: string; token: string }, toolCallId: string) => ({ fence, toolCallId, marker: { toolName: 'restart', input: {}, startedAt: Date.now() }, ttlMs: 60_000, audit: [] });
      const outcomeOf = (fence: { threadKey: string; token: string }, toolCallId: string) =>
        store.markExecuting(marking(fence, toolCallId)).then(
          (result) => result,
          (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`,
        );
      expect(await outcomeOf(unreadFence, 'call-0')).toBe('marked');
      expect(await outcomeOf(readFence, 'call-0')).toBe('marked');

      // Shard 0's primary no longer lets the bot read its settings (the EXISTS that routes INFO there is refused).
      await unreadAdmin.call('ACL', 'SETUSER', user, 'resetkeys', ...ALL_BUT_THREADS_LISTS);
      // A /healthz check reads the settings again: it names the unread shard, and the failed read is not kept.
      expect((await store.risks()).map((risk) => risk.code)).toContain('redis-primaries-unread');

      expect(await outcomeOf(readFence, 'call-1'), "a tool call refused because another shard's primary would not say its settings").toBe('marked');
      // The unread shard's own call is refused before its marker is written: whether it must wait for the disk is not known.
      expect(await outcomeOf(unreadFence, 'call-1')).not.toBe('marked');
      expect([...(await store.executingCalls(unreadThread)).keys()]).toEqual(['call-0']);
      expect([...(await store.executingCalls(readThread)).keys()].sort()).toEqual(['call-0', 'call-1']);
    } finally {
      await unreadAdmin.call('ACL', 'SETUSER', user, 'resetkeys', '~*');
      await store.close();
      scene.close();
    }
  }, 60_000);
});
