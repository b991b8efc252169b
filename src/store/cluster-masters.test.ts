import { describe, expect, it } from 'vitest';
import { mastersNeeded } from './cluster-masters.js';
import { clusterSlot, createRedisKeys, keySlot } from './redis-keys.js';

describe('the masters the bot\'s store calls need', () => {
  it('are those holding a shard or one of the two markers, not the others', () => {
    const keys = createRedisKeys({ keyPrefix: 'countersign:', shards: 2 });
    // Every slot on `other`, but those of the two shards and the two markers, each on a master of its own.
    const slots: string[][] = Array.from({ length: 16_384 }, () => ['other', 'other-replica']);
    slots[keySlot(keys.shard(0).ready())] = ['shard-0'];
    slots[keySlot(keys.shard(1).ready())] = ['shard-1'];
    slots[keySlot(keys.shardCountMarker())] = ['shard-count'];
    slots[keySlot(keys.layoutMarker())] = ['layout'];
    expect([...mastersNeeded({ keys, slots })].sort()).toEqual(['layout', 'shard-0', 'shard-1', 'shard-count']);
  });

  it('are none while the slot map is not known', () => {
    expect(mastersNeeded({ keys: createRedisKeys({ keyPrefix: 'countersign:' }), slots: [] }).size).toBe(0);
  });
});

describe('keySlot', () => {
  it('hashes a key\'s tag when it has a non-empty one, else the whole key', () => {
    expect(keySlot('p:{s0.1}:ready')).toBe(clusterSlot('s0.1'));
    expect(keySlot('p:shards')).toBe(clusterSlot('p:shards'));
    expect(keySlot('p:{}:x')).toBe(clusterSlot('p:{}:x'));
    // Redis's own examples: CLUSTER KEYSLOT.
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('foo{}{bar}')).toBe(clusterSlot('foo{}{bar}'));
    expect(keySlot('foo{{bar}}zap')).toBe(clusterSlot('{bar'));
  });
});
