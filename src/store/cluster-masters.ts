import type { Cluster, Redis } from 'ioredis';
import { keySlot, type RedisKeys } from './redis-keys.js';

/** A Cluster client's slot map: per slot, the node keys (`host:port`) serving it, the master first. */
export type SlotMap = ReadonlyArray<readonly string[] | undefined>;

/**
 * The masters of a slot map (node keys), each once; none while it is not known (before the client
 * first connected). The nodes the bot writes to: its untagged keys (`once:`, a schedule's claim, the
 * markers) hash to any slot, so every master, not only those holding a shard. `/healthz`'s write probe
 * and its warnings (`redis-persistence.ts`) both ask these.
 */
export function slotMapMasters(slots: SlotMap): string[] {
  const masters = new Set<string>();
  for (const nodes of slots) if (nodes?.[0]) masters.add(nodes[0]);
  return [...masters];
}

/**
 * Each master of the client's slot map with the client's own connection to it (`undefined` when its
 * pool has none: a node it just dropped), so a command is answered by that node and no other: sent
 * through the Cluster client, a keyless one goes to any node, and a keyed one follows -MOVED and -ASK.
 */
export function masterConnections(cluster: Cluster): Array<{ master: string; connection: Redis | undefined }> {
  const pool = new Map(cluster.nodes('all').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  return slotMapMasters(cluster.slots).map((master) => ({ master, connection: pool.get(master) }));
}

/**
 * The masters of a slot map that the bot's store calls need: those holding one of its shards, and those
 * holding its two markers, the shard count (written before a process's first write and every minute)
 * and the key layout (read before a process's first call): `key-layout.ts`. One that is down fails the
 * bot's calls, or a process's once it starts again. A master holding none of them (with
 * `cluster-require-full-coverage no`, down while these take writes) fails only the untagged keys that
 * hash to it, a Slack event's delivery dedupe among them.
 */
export function mastersNeeded({ keys, slots }: { keys: RedisKeys; slots: SlotMap }): Set<string> {
  const needed = new Set<string>();
  for (const key of [...keys.shards().map((shard) => shard.ready()), keys.shardCountMarker(), keys.layoutMarker()]) {
    const master = slots[keySlot(key)]?.[0];
    if (master) needed.add(master);
  }
  return needed;
}
