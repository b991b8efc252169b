import type { Cluster, Redis } from 'ioredis';
import type { KeptSchedule } from './kept-schedule.js';
import type { ShardKeys } from './redis-keys.js';

export interface RedisKeptScheduleOptions<T> {
  redis: Redis | Cluster;
  /** Runs `CLAIM_KEPT_SCRIPT` on the schedule `key`; its reply. */
  claimKept(key: string, record: string, now: number, until: number): Promise<unknown>;
  /** Members of every shard's `keyOf` scored up to `max`, lowest first, at most `limit`. */
  lowestAcrossShards(keyOf: (shard: ShardKeys) => string, max: number, limit: number): Promise<string[]>;
  /** The shard an item is kept in: its thread's, or its step's. */
  shardOf(item: T): ShardKeys;
  /** The shard's sorted set of these items (score = next try). */
  keyOf(shard: ShardKeys): string;
  /** The item's member: the same text for the same item, so the one a sweep read is the one it moves or removes. */
  record(item: T): string;
  /** Undefined for a member that is not one of these items: it is passed over. */
  parse(record: string): T | undefined;
}

/** Kept work as a sorted set a shard, member = its record; see `KeptSchedule`. */
export function createRedisKeptSchedule<T>({ redis, claimKept, lowestAcrossShards, shardOf, keyOf, record, parse }: RedisKeptScheduleOptions<T>): KeptSchedule<T> {
  const keyFor = (item: T) => keyOf(shardOf(item));
  return {
    async schedule(item, at) {
      await redis.zadd(keyFor(item), at, record(item));
    },

    async postpone(item, until) {
      // XX: never kept again once forgotten; CH: counts a moved one, so the same time twice moves it once.
      return (await redis.zadd(keyFor(item), 'XX', 'CH', until, record(item))) === 1;
    },

    async claim(item, { now, until }) {
      return (await claimKept(keyFor(item), record(item), now, until)) === 1;
    },

    async due({ now, limit }) {
      const due = await lowestAcrossShards(keyOf, now, limit);
      return due.map(parse).filter((item) => item !== undefined);
    },

    async forget(item) {
      return (await redis.zrem(keyFor(item), record(item))) === 1;
    },
  };
}
