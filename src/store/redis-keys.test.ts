import { describe, expect, it } from 'vitest';
import { channelOfThread, clusterSlot, createRedisKeys, newStepId } from './redis-keys.js';

/** The hash tag of a key as Redis Cluster reads it: between the first `{` and the next `}`. */
const tagOf = (key: string) => key.slice(key.indexOf('{') + 1, key.indexOf('}', key.indexOf('{')));

describe('Redis keys', () => {
  const keys = createRedisKeys({ keyPrefix: 'countersign:', shards: 16 });

  it('puts a thread, its steps, its channel and its shard schedules under one hash tag', () => {
    const threadKey = 'T1:C1:1700000000.000100';
    const stepId = newStepId(threadKey);
    const thread = keys.ofThread(threadKey);
    const names = [
      thread.thread(threadKey),
      thread.messages(threadKey),
      thread.fence(threadKey),
      thread.queue(threadKey),
      thread.busy(),
      thread.ready(),
      keys.ofStep(stepId).step(stepId),
      keys.ofStep(stepId).schedule('expiry'),
      keys.ofStep(stepId).complete(),
      keys.ofStep(stepId).audit(),
      keys.ofChannel('T1', 'C1').refusalAudit(),
      keys.ofChannel('T1', 'C1').grants('T1', 'C1'),
      keys.ofChannel('T1', 'C1').pending('T1', 'C1'),
      keys.ofThread('T1:C1:1800000000.000200').lock('T1:C1:1800000000.000200'),
    ];
    expect(new Set(names.map(tagOf)).size).toBe(1);
    expect(channelOfThread(threadKey)).toBe('T1:C1');
  });

  it('spreads the shards evenly over the slot range, so each master of a cluster holds its share', () => {
    const slots = keys.shards().map((shard) => clusterSlot(tagOf(shard.busy())));
    expect(new Set(slots).size).toBe(16);
    // redis-cli --cluster create gives 3 masters 0-5460, 5461-10922, 10923-16383.
    const perMaster = [0, 0, 0];
    for (const slot of slots) perMaster[slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2]! += 1;
    expect(perMaster).toEqual([6, 5, 5]);
  });

  it('spreads channels over every shard', () => {
    const used = new Set(Array.from({ length: 400 }, (_unused, index) => keys.ofThread(`T1:C${index}:1.1`).index));
    expect(used.size).toBe(16);
  });

  it('computes the slot Redis computes (CLUSTER KEYSLOT)', () => {
    // Values from `redis-cli CLUSTER KEYSLOT`: the CRC16 of the Redis Cluster specification.
    expect(clusterSlot('123456789')).toBe(12739);
    expect(clusterSlot('foo')).toBe(12182);
  });

  it('refuses a prefix that would change the hash tag, and a shard count out of range', () => {
    expect(() => createRedisKeys({ keyPrefix: 'a{b}:' })).toThrow('must not contain { or }');
    expect(() => createRedisKeys({ keyPrefix: 'a:', shards: 0 })).toThrow('from 1 to 1024');
  });
});
