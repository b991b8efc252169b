import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { gracefulFailover, useMasterWithReplica } from './cluster-scene.test-support.js';
import { createRedisKeys } from './redis-keys.js';
import { readPrimaryPersistence } from './redis-persistence.js';
import { createRedisStore } from './redis-store.js';

/**
 * Review of 2d0711f / cea7c6c: readPrimaryPersistence routes INFO/WAITAOF to a shard's primary by an
 * EXISTS of one of its keys sent first in the same Cluster pipeline, and then drops that EXISTS's
 * reply (`replies.slice(1)`). After a graceful failover (CLUSTER FAILOVER, as managed clusters do for
 * maintenance) the client's slot map still names the old master, now a replica: the EXISTS is answered
 * -MOVED, which ioredis does not follow in a mixed pipeline (INFO answered), and the replica's INFO and
 * WAITAOF refusal ("ERR WAITAOF cannot be used with replica instances") are taken for the shard's
 * primary's. That read is cached for every marker and withdrawal (waitsForDisk, no max age) and for
 * /healthz's warnings.
 */
const pair = useMasterWithReplica({ directoryPrefix: 'rev-persistence-failover-' });

describe('the primaries\' settings after a graceful Cluster failover', () => {
  it('are read from the shard\'s new primary, not from the old one now its replica', async () => {
    const keyPrefix = `persistence-failover:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    // The one shard's primary, routed by a key of the shard as `redis-durable-writes.ts` reads it.
    const readShard = () => readPrimaryPersistence({ client: cluster, route: keys.shards()[0]!.ready() });
    const cluster = new Cluster([{ host: '127.0.0.1', port: pair.master.port }]);
    // The future primary evicts keys; the present one does not.
    await pair.replicaClient.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const store = createRedisStore({ target: { kind: 'cluster', nodes: [{ host: '127.0.0.1', port: pair.master.port }], tls: false }, keyPrefix, shards: 1, risksMaxAgeMs: 0 });
    try {
      // Before: the primary (one replica streaming, noeviction) gives no warning.
      expect((await readShard()).replicas).toBe(1);
      expect((await store.risks()).map((risk) => risk.code)).toEqual([]);

      await gracefulFailover(pair);

      // The shard's primary is now the former replica: it streams to one replica and evicts keys.
      const direct = await readShard();
      // The store's read of the primaries' settings, due again (what waitsForDisk and /healthz's warnings share).
      const codes = (await store.risks()).map((risk) => risk.code);
      expect(codes, '/healthz warnings describe the old master, now a replica').toEqual(['redis-evicts-keys']);
      expect({ replicas: direct.replicas, evictionPolicy: direct.evictionPolicy }, 'INFO answered by the demoted node (its -MOVED to the routing EXISTS dropped)').toEqual({ replicas: 1, evictionPolicy: 'allkeys-lru' });
    } finally {
      await pair.replicaClient.config('SET', 'maxmemory-policy', 'noeviction').catch(() => {});
      cluster.disconnect();
      await store.close();
    }
  }, 60_000);
});
