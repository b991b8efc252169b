import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { healthReply } from '../runtime/health-check.js';
import { openClusterScene, useRedisCluster } from './cluster-scene.test-support.js';
import { createRedisStore } from './redis-store.js';

/**
 * The shards' primaries' settings that every executing marker and Deny/Revoke reads first (`waitsForDisk`)
 * cannot be read while the write probe passes: here the bot's ACL user loses EXISTS, which routes that read
 * to each shard's primary. Every tool call is then refused; /healthz used to answer a plain 200, since a
 * risks() that fails only leaves the warnings out.
 */
describe('/healthz while the shards\' primaries\' settings cannot be read', () => {
  const cluster = useRedisCluster({ startTimeoutMs: 30_000 });

  it('answers 200 naming it (redis-primaries-unread)', async () => {
    const scene = await openClusterScene(cluster());
    const { target, admins } = scene;
    const user = target.username as string;
    // risksMaxAgeMs 0: what /healthz does once its minute-old read is due again.
    const store = createRedisStore({ target, keyPrefix: `test:primaries-unread:${randomUUID()}:`, shards: 2, risksMaxAgeMs: 0 });
    try {
      expect((await store.risks()).map((risk) => risk.code)).not.toContain('redis-primaries-unread');
      for (const admin of admins.values()) await admin.call('ACL', 'SETUSER', user, '-exists');
      const health = await healthReply(store);
      expect(health.status, health.body).toBe(200);
      expect(JSON.parse(health.body).warnings ?? [], health.body).toContain('redis-primaries-unread');
    } finally {
      for (const admin of admins.values()) await admin.call('ACL', 'SETUSER', user, '+exists');
      await store.close();
      scene.close();
    }
  }, 60_000);
});
