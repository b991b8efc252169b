import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { createRedisKeys } from './redis-keys.js';
import { readRedisPersistence } from './redis-persistence.js';
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
let directory: string;
let master: RedisServerHandle;
let replica: RedisServerHandle;
let masterClient: Redis;
let replicaClient: Redis;

const clusterArguments = (name: string) => ['--cluster-enabled', 'yes', '--cluster-config-file', join(directory, `${name}.conf`), '--cluster-node-timeout', '5000', '--dir', directory];

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function replicated(primary: Redis): Promise<boolean> {
  await primary.incr('replication-barrier');
  return Number(await primary.call('WAIT', '1', '100')) === 1;
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'rev-persistence-failover-'));
  [master, replica] = await Promise.all([startRedisServer({ extraArguments: clusterArguments('master') }), startRedisServer({ extraArguments: clusterArguments('replica') })]);
  masterClient = new Redis(master.port, '127.0.0.1');
  replicaClient = new Redis(replica.port, '127.0.0.1');
  await masterClient.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
  await masterClient.call('CLUSTER', 'MEET', '127.0.0.1', String(replica.port));
  const masterId = (await masterClient.call('CLUSTER', 'MYID')) as string;
  await waitFor(async () => ((await replicaClient.call('CLUSTER', 'NODES')) as string).includes(masterId), 'the replica to know the master');
  await replicaClient.call('CLUSTER', 'REPLICATE', masterId);
  await waitFor(async () => ((await masterClient.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok'), 'cluster_state:ok');
  await waitFor(async () => await replicated(masterClient), 'the replica to stream from the master');
}, 30_000);

afterAll(async () => {
  masterClient?.disconnect();
  replicaClient?.disconnect();
  await Promise.all([master?.stop(), replica?.stop()]);
  rmSync(directory, { recursive: true, force: true });
});

async function gracefulFailover(): Promise<void> {
  await replicaClient.call('CLUSTER', 'FAILOVER');
  await waitFor(async () => ((await replicaClient.call('ROLE')) as unknown[])[0] === 'master' && ((await masterClient.call('ROLE')) as unknown[])[0] === 'slave', 'the failover');
  await waitFor(async () => await replicated(replicaClient), 'the old master to stream from the new one');
}

describe('the primaries\' settings after a graceful Cluster failover', () => {
  it('are read from the shard\'s new primary, not from the old one now its replica', async () => {
    const keyPrefix = `persistence-failover:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    const cluster = new Cluster([{ host: '127.0.0.1', port: master.port }]);
    // The future primary evicts keys; the present one does not.
    await replicaClient.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const store = createRedisStore({ target: { kind: 'cluster', nodes: [{ host: '127.0.0.1', port: master.port }], tls: false }, keyPrefix, shards: 1, risksMaxAgeMs: 0 });
    try {
      // Before: the primary (one replica streaming, noeviction) gives no warning.
      expect((await readRedisPersistence({ redis: cluster, keys })).replicas).toBe(1);
      expect((await store.risks()).map((risk) => risk.code)).toEqual([]);

      await gracefulFailover();

      // The shard's primary is now the former replica: it streams to one replica and evicts keys.
      const direct = await readRedisPersistence({ redis: cluster, keys });
      // The store's read of the primaries' settings, due again (what waitsForDisk and /healthz's warnings share).
      const codes = (await store.risks()).map((risk) => risk.code);
      expect(codes, '/healthz warnings describe the old master, now a replica').toEqual(['redis-evicts-keys']);
      expect({ replicas: direct.replicas, evictionPolicy: direct.evictionPolicy }, 'INFO answered by the demoted node (its -MOVED to the routing EXISTS dropped)').toEqual({ replicas: 1, evictionPolicy: 'allkeys-lru' });
    } finally {
      await replicaClient.config('SET', 'maxmemory-policy', 'noeviction').catch(() => {});
      cluster.disconnect();
      await store.close();
    }
  }, 60_000);
});
