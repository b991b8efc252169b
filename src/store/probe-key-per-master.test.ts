import { describe, expect, it } from 'vitest';
import type { SlotMap } from './cluster-masters.js';
import { createProbeKeyPerMaster, type ProbeKey } from './probe-key-per-master.js';
import { clusterSlot, createRedisKeys, isHealthProbeKey } from './redis-keys.js';

const keyPrefix = 'countersign:';

/** `ranges`: [first slot, last slot, master] each. */
function slotMap(ranges: Array<[number, number, string]>): string[][] {
  const slots: string[][] = [];
  for (const [first, last, master] of ranges) for (let slot = first; slot <= last; slot += 1) slots[slot] = [master, `${master}-replica`];
  return slots;
}

function masterOf(slots: SlotMap, key: string): string | undefined {
  return slots[clusterSlot(key.slice(key.indexOf('{') + 1, key.indexOf('}')))]?.[0];
}

describe('the health probe keys of a Cluster', () => {
  it('are one per master, even one that holds no shard and a single slot, and none of them data', () => {
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    const slots = slotMap([
      [0, 8190, 'a'],
      [8191, 8191, 'b'],
      [8192, 16383, 'c'],
    ]);
    const probeKeys = createProbeKeyPerMaster({ keys, processId: 'p1' }).keys(slots).map(({ key }) => key);
    expect(probeKeys.map((key) => masterOf(slots, key)).sort()).toEqual(['a', 'b', 'c']);
    for (const key of probeKeys) expect(isHealthProbeKey(keyPrefix, key), key).toBe(true);
  });

  it('stay while the slot map does, and follow a slot that moved', () => {
    const keys = createRedisKeys({ keyPrefix, shards: 4 });
    const probeKeys = createProbeKeyPerMaster({ keys, processId: 'p1' });
    const perMaster = (slots: SlotMap) => probeKeys.keys(slots).map(({ key }) => key);
    const slots = slotMap([
      [0, 5460, 'a'],
      [5461, 10922, 'b'],
      [10923, 16383, 'c'],
    ]);
    const first = perMaster(slots);
    expect(perMaster(slots)).toEqual(first);
    // Resharding: the slot of a's key now belongs to a new master d, a keeps the rest of its range.
    const moved = first.find((key) => masterOf(slots, key) === 'a') as string;
    const slot = clusterSlot(moved.slice(moved.indexOf('{') + 1, moved.indexOf('}')));
    slots[slot] = ['d'];
    const after = perMaster(slots);
    expect(after.map((key) => masterOf(slots, key)).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(after).toContain(moved);
  });

  it('leave a tag its master answered -ASK for (its slot migrating) while the master keeps that slot', () => {
    const keys = createRedisKeys({ keyPrefix, shards: 1 });
    const perMaster = createProbeKeyPerMaster({ keys, processId: 'p1' });
    const slots = slotMap([
      [0, 8191, 'a'],
      [8192, 16383, 'b'],
    ]);
    const first = perMaster.keys(slots);
    const asked = first.find((probe) => probe.master === 'a') as ProbeKey;
    perMaster.avoid(asked);
    const next = perMaster.keys(slots);
    const instead = next.find((probe) => probe.master === 'a') as ProbeKey;
    expect(instead.tag).not.toBe(asked.tag);
    expect(masterOf(slots, instead.key)).toBe('a');
    // The other master's key is kept, and a is not given the avoided tag back on later checks.
    expect(next.find((probe) => probe.master === 'b')).toEqual(first.find((probe) => probe.master === 'b'));
    expect(perMaster.keys(slots)).toEqual(next);
  });

  it('are every shard key while the slot map is not known', () => {
    const keys = createRedisKeys({ keyPrefix, shards: 3 });
    expect(createProbeKeyPerMaster({ keys, processId: 'p1' }).keys([]).map(({ key }) => key)).toEqual(keys.shards().map((shard) => shard.healthProbe('p1')));
  });
});
