import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisClusterHandle } from '../../test/helpers/redis-cluster.js';
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
