import { type SlotMap, slotMapMasters } from './cluster-masters.js';
import { clusterSlot, type RedisKeys } from './redis-keys.js';

/**
 * Tags tried before giving up on a master: one that owns a single slot of 16384 is found within this
 * many with a chance of 1 − e⁻¹², and a search runs only when the slot map changed.
 */
const MAX_TAG_ATTEMPTS = 200_000;

/**
 * The keys `/healthz` writes in a Cluster: one per master of the slot map, each under a hash tag
 * whose slot that master owns. Not only the masters holding a shard: the bot's untagged keys (the
 * delivery dedupe's `once:`, the shard-count and layout markers) hash anywhere, so a master holding
 * no shard takes the bot's writes too, and one that refuses them fails Slack events and then every
 * store call. A master's key is kept while its slot stays the master's: the search for tags runs
 * again only when the slot map changed (a failover, resharding). While the map is not known yet,
 * every shard's key (the client routes them once it is).
 */
export function createProbeKeyPerMaster({ keys, processId }: { keys: RedisKeys; processId: string }): (slots: SlotMap) => string[] {
  let byMaster = new Map<string, { tag: string; key: string }>();
  return (slots) => {
    const masters = new Set(slotMapMasters(slots));
    if (masters.size === 0) return keys.shards().map((shard) => shard.healthProbe(processId));
    const kept = new Map<string, { tag: string; key: string }>();
    for (const [master, probe] of byMaster) if (masters.has(master) && slots[clusterSlot(probe.tag)]?.[0] === master) kept.set(master, probe);
    for (let attempt = 0; kept.size < masters.size && attempt < MAX_TAG_ATTEMPTS; attempt += 1) {
      const tag = `probe.${attempt}`;
      const master = slots[clusterSlot(tag)]?.[0];
      if (master && !kept.has(master)) kept.set(master, { tag, key: keys.healthProbe(tag, processId) });
    }
    byMaster = kept;
    return [...kept.values()].map(({ key }) => key);
  };
}
