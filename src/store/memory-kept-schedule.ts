import type { KeptSchedule } from './kept-schedule.js';

export interface MemoryKeptScheduleOptions<T> {
  /** The item's key: the same text for the same item, as the Redis store's member (`RedisKeptScheduleOptions.record`). */
  record(item: T): string;
}

/**
 * Kept work in a map by record, each with its next try; see `KeptSchedule`. Like the memory store's
 * other methods, each does its whole change before its first `await`, so it is atomic. Items are
 * copied in and out, so a caller changing its object changes nothing kept.
 */
export function createMemoryKeptSchedule<T extends object>({ record }: MemoryKeptScheduleOptions<T>): KeptSchedule<T> {
  const kept = new Map<string, { item: T; at: number }>();
  return {
    async schedule(item, at) {
      kept.set(record(item), { item: { ...item }, at });
    },

    async postpone(item, until) {
      const entry = kept.get(record(item));
      if (entry === undefined || entry.at === until) return false;
      entry.at = until;
      return true;
    },

    async claim(item, { now, until }) {
      // As CLAIM_KEPT_SCRIPT: moved to `until` only while still due by `now`.
      const entry = kept.get(record(item));
      if (entry === undefined || entry.at > now) return false;
      entry.at = until;
      return true;
    },

    async due({ now, limit }) {
      return [...kept.values()]
        .filter((entry) => entry.at <= now)
        .sort((left, right) => left.at - right.at)
        .slice(0, limit)
        .map((entry) => ({ ...entry.item }));
    },

    async forget(item) {
      return kept.delete(record(item));
    },
  };
}
