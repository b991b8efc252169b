import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisClusterHandle } from '../../test/helpers/redis-cluster.js';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { createRedisKeys, keySlot, type RedisKeys } from './redis-keys.js';

/** One Redis Cluster for the file's tests, started before them and stopped after. */
export function useRedisCluster(options: { startTimeoutMs?: number } = {}): () => RedisClusterHandle {
  let cluster: RedisClusterHandle;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, options.startTimeoutMs);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => cluster;
}

/** What a test needs to place the bot's keys on chosen masters of a cluster, and to act on those masters. */
export interface ClusterScene {
  target: Extract<RedisTarget, { kind: 'cluster' }>;
  /** An admin connection per master, by `host:port` (as the slot map names them). */
  admins: Map<string, Redis>;
  /** The `host:port` of the master the slot map gives `slot`. */
  ownerOfSlot: (slot: number) => string;
  /** The `host:port` of the master the slot map gives `key`. */
  ownerOf: (key: string) => string;
  /** How many slots the router's slot map holds (for a failure message). */
  slotCount: () => number;
  /** Disconnects the router and the admin connections. */
  close: () => void;
}

/** Connects to `cluster` and waits for its slot map. */
export async function openClusterScene(cluster: RedisClusterHandle): Promise<ClusterScene> {
  const target = parseRedisTarget(cluster.url) as Extract<RedisTarget, { kind: 'cluster' }>;
  const auth = { ...(target.username && { username: target.username }), ...(target.password && { password: target.password }) };
  const router = new Cluster(
    target.nodes.map(({ host, port }) => ({ host, port })),
    { redisOptions: auth },
  );
  const admins = new Map(target.nodes.map(({ host, port }) => [`${host}:${port}`, new Redis(port, host, auth)]));
  await router.ping();
  const ownerOfSlot = (slot: number) => router.slots[slot]?.[0] as string;
  const ownerOf = (key: string) => ownerOfSlot(keySlot(key));
  return {
    target,
    admins,
    ownerOfSlot,
    ownerOf,
    slotCount: () => router.slots.length,
    close: () => {
      router.disconnect();
      for (const admin of admins.values()) admin.disconnect();
    },
  };
}

/**
 * A one-shard key prefix (starting `<label>:`) whose shard-count marker lives on another master than
 * the shard, and a delivery id whose once: key lives on that master too: the bot's keys on a master
 * that holds no shard.
 */
export function placeOnMasterWithoutShard(scene: ClusterScene, label: string): { keyPrefix: string; keys: RedisKeys; uncovered: string; deliveryId: string } {
  let keyPrefix = '';
  let uncovered = '';
  for (;;) {
    keyPrefix = `${label}:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    const shardOwner = scene.ownerOf(keys.shard(0).step('x'));
    uncovered = scene.ownerOf(keys.shardCountMarker());
    if (uncovered !== shardOwner) break;
  }
  const keys = createRedisKeys({ keyPrefix, shards: 1 });
  let deliveryId = '';
  do deliveryId = `event:${randomUUID()}`;
  while (scene.ownerOf(keys.once(deliveryId)) !== uncovered);
  return { keyPrefix, keys, uncovered, deliveryId };
}

/**
 * A one-shard key prefix (starting `<label>:`) whose shard and shard-count marker live on the master holding
 * `threadKey`'s executing marker, and `other`, a master (at `otherAddress`, as `scene.admins` names it) holding
 * neither them nor the layout marker: one the bot's calls on that thread do not need. Every master is set
 * cluster-require-full-coverage no, so that `other`'s slots uncovered (it down, or marked failed) do not stop
 * the cluster.
 */
export async function placeBesideMasterWithoutShard(
  scene: ClusterScene,
  cluster: RedisClusterHandle,
  options: { label: string; threadKey: string },
): Promise<{ keyPrefix: string; other: RedisServerHandle; otherAddress: string }> {
  const { label, threadKey } = options;
  let keyPrefix = '';
  let shardOwner = '';
  for (;;) {
    keyPrefix = `${label}:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    shardOwner = scene.ownerOf(keys.ofThread(threadKey).executing(threadKey));
    if (scene.ownerOf(keys.shardCountMarker()) === shardOwner) break;
  }
  for (const admin of scene.admins.values()) await admin.config('SET', 'cluster-require-full-coverage', 'no');
  const layoutOwner = scene.ownerOf(createRedisKeys({ keyPrefix, shards: 1 }).layoutMarker());
  const other = cluster.nodes.find((node) => `127.0.0.1:${node.port}` !== shardOwner && `127.0.0.1:${node.port}` !== layoutOwner)!;
  return { keyPrefix, other, otherAddress: `127.0.0.1:${other.port}` };
}

/** Polls `check` every 50 ms until it answers true; throws naming `what` after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A write on `primary`, then WAIT for it: a WAIT on a connection that never wrote asks for offset 0,
 * which a replica still in its first full sync already "has", so it is no barrier on its own.
 */
export async function replicated(primary: Redis): Promise<boolean> {
  await primary.incr('replication-barrier');
  return Number(await primary.call('WAIT', '1', '100')) === 1;
}

/** A one-master Redis Cluster (all slots) whose master has one replica, with an admin connection to each. */
export interface MasterWithReplica {
  master: RedisServerHandle;
  replica: RedisServerHandle;
  masterClient: Redis;
  replicaClient: Redis;
}

/**
 * For the tests of the file that calls this at its top level: a `MasterWithReplica` started before them
 * (its replica streaming from its master) and stopped after; its fields are set once the tests run.
 * `extraArguments` go to both servers, after the cluster ones.
 */
export function useMasterWithReplica(options: { directoryPrefix: string; extraArguments?: string[] }): MasterWithReplica {
  const pair = {} as MasterWithReplica;
  let directory: string;
  const clusterArguments = (name: string) => ['--cluster-enabled', 'yes', '--cluster-config-file', join(directory, `${name}.conf`), '--cluster-node-timeout', '5000', '--dir', directory, ...(options.extraArguments ?? [])];
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), options.directoryPrefix));
    [pair.master, pair.replica] = await Promise.all([startRedisServer({ extraArguments: clusterArguments('master') }), startRedisServer({ extraArguments: clusterArguments('replica') })]);
    pair.masterClient = new Redis(pair.master.port, '127.0.0.1');
    pair.replicaClient = new Redis(pair.replica.port, '127.0.0.1');
    const { masterClient, replicaClient } = pair;
    await masterClient.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await masterClient.call('CLUSTER', 'MEET', '127.0.0.1', String(pair.replica.port));
    const masterId = (await masterClient.call('CLUSTER', 'MYID')) as string;
    await waitFor(async () => ((await replicaClient.call('CLUSTER', 'NODES')) as string).includes(masterId), 'the replica to know the master');
    await replicaClient.call('CLUSTER', 'REPLICATE', masterId);
    await waitFor(async () => ((await masterClient.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok'), 'cluster_state:ok');
    await waitFor(async () => await replicated(masterClient), 'the replica to stream from the master');
  }, 30_000);
  afterAll(async () => {
    pair.masterClient?.disconnect();
    pair.replicaClient?.disconnect();
    await Promise.all([pair.master?.stop(), pair.replica?.stop()]);
    rmSync(directory, { recursive: true, force: true });
  });
  return pair;
}

/** A graceful failover (CLUSTER FAILOVER): the replica takes over the slots, the old master becomes its replica and streams from it. */
export async function gracefulFailover({ masterClient, replicaClient }: MasterWithReplica): Promise<void> {
  await replicaClient.call('CLUSTER', 'FAILOVER');
  await waitFor(async () => ((await replicaClient.call('ROLE')) as unknown[])[0] === 'master' && ((await masterClient.call('ROLE')) as unknown[])[0] === 'slave', 'the failover');
  await waitFor(async () => await replicated(replicaClient), 'the old master to stream from the new one');
}
