import { type SlotMap, slotMapMasters } from './cluster-masters.js';
import { clusterSlot, type RedisKeys } from './redis-keys.js';

/**
 * Tags tried before giving up on a master: one that owns a single slot of 16384 is found within this
 * many with a chance of 1 − e⁻¹², and a search runs only when the slot map changed.
 */
const MAX_TAG_ATTEMPTS = 200_000;

/** One key `/healthz` writes: `master` and `tag` are undefined for a shard's key, before the slot map is known. */
export interface ProbeKey {
  key: string;
  master: string | undefined;
  tag: string | undefined;
}

export interface ProbeKeyPerMaster {
  /** A key per master of `slots` (see `createProbeKeyPerMaster`). */
  keys(slots: SlotMap): ProbeKey[];
  /**
   * Its master answered -ASK: the tag's slot is being migrated away (MIGRATING, a reshard in progress or
   * left unfinished), so a key it does not hold is written on the target and the master is not probed.
   * The tag is not given to that master again while the slot map gives it the slot; the next `keys` finds another.
   */
  avoid(probe: ProbeKey): void;
}

/**
 * The keys `/healthz` writes in a Cluster: one per master of the slot map, each under a hash tag
 * whose slot that master owns. Not only the masters holding a shard: the bot's untagged keys (the
 * delivery dedupe's `once:`, the shard-count and layout markers) hash anywhere, so a master holding
 * no shard takes the bot's writes too, and one that refuses them fails Slack events and then every
 * store call. A master's key is kept while its slot stays the master's (and is not `avoid`ed): the
 * search for tags runs again only when the slot map changed (a failover, resharding). While the map
 * is not known yet, every shard's key (the client routes them once it is).
 */
export function createProbeKeyPerMaster({ keys, processId }: { keys: RedisKeys; processId: string }): ProbeKeyPerMaster {
  let byMaster = new Map<string, ProbeKey>();
  // Tag → the master that answered -ASK for it; dropped once the slot map gives its slot to another.
  const avoided = new Map<string, string>();
  return {
    keys(slots) {
      const masters = new Set(slotMapMasters(slots));
      if (masters.size === 0) return keys.shards().map((shard) => ({ key: shard.healthProbe(processId), master: undefined, tag: undefined }));
      for (const [tag, master] of avoided) if (slots[clusterSlot(tag)]?.[0] !== master) avoided.delete(tag);
      const kept = new Map<string, ProbeKey>();
      for (const [master, probe] of byMaster) {
        if (probe.tag !== undefined && masters.has(master) && slots[clusterSlot(probe.tag)]?.[0] === master && !avoided.has(probe.tag)) kept.set(master, probe);
      }
      for (let attempt = 0; kept.size < masters.size && attempt < MAX_TAG_ATTEMPTS; attempt += 1) {
        const tag = `probe.${attempt}`;
        const master = slots[clusterSlot(tag)]?.[0];
        if (master && !kept.has(master) && !avoided.has(tag)) kept.set(master, { key: keys.healthProbe(tag, processId), master, tag });
      }
      byMaster = kept;
      return [...kept.values()];
    },
    avoid({ master, tag }) {
      if (master === undefined || tag === undefined) return;
      avoided.set(tag, master);
      if (byMaster.get(master)?.tag === tag) byMaster.delete(master);
    },
  };
}
