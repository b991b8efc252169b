import type { Cluster, Redis } from 'ioredis';
import { duplicateClient } from './connect-to-redis.js';
import type { RedisKeys } from './redis-keys.js';
import { TAKE_READY_SCRIPT } from './redis-scripts.js';

export interface ReadyWaiter {
  /**
   * Threads handed off to the workers: at least one, up to `max`, or none after `timeoutMs`; each
   * hint goes to one caller.
   */
  next(options: { timeoutMs: number; max: number }): Promise<string[]>;
  close(): void;
}

interface Waiter {
  max: number;
  claim(): void;
  resolve(threadKeys: string[]): void;
}

/** The pop started for callers still waiting when an earlier pop ran out; each caller's own timer ends its wait. */
const REPEAT_POP_MS = 1_000;

/**
 * Waits on every shard's ready list at once. A blocking pop holds its connection until it
 * answers, so it gets one of its own. One server (or a Sentinel primary) takes one BLPOP over all
 * the lists. A Cluster refuses a BLPOP whose keys lie in different slots, so there each shard gets
 * its own connection and its own BLPOP, all started together: a hint wakes a worker as soon as it
 * is pushed, whichever shard it lands in (polling the shards in turn would add up to a whole round
 * of timeouts to every hand-off). The price is one cluster client per shard per worker process,
 * opened on the first wait. A hint popped after its caller gave up goes back to the head of its
 * list for another worker. A caller with room for more than one takes the hints queued behind the
 * first in the same wake-up (one script of plain LPOPs over the group's lists): a burst of hand-offs is picked up in a round
 * trip or two instead of one round trip, and one turn of a busy event loop, per hint.
 */
export function createReadyWaiter({ redis, keys, onConnectionError }: { redis: Redis | Cluster; keys: RedisKeys; onConnectionError?: (error: unknown) => void }): ReadyWaiter {
  const quiet = <CLIENT extends Redis | Cluster>(client: CLIENT): CLIENT => {
    // ioredis reports connection errors as events; unheard, Node would end the process.
    client.on('error', (error: unknown) => onConnectionError?.(error));
    return client;
  };
  const lists = keys.shards().map((shard) => shard.ready());
  const groups = redis.isCluster ? lists.map((list) => [list]) : [lists];
  const connections: Array<Redis | Cluster | undefined> = groups.map(() => undefined);
  const popping = groups.map(() => false);
  const waiters: Waiter[] = [];
  // The number of keys is the group's size (every shard's list, or one on a Cluster): given per call.
  redis.defineCommand('csTakeReady', { lua: TAKE_READY_SCRIPT });
  const takeReady = (redis as unknown as { csTakeReady: (...args: Array<string | number>) => Promise<string[]> }).csTakeReady.bind(redis);
  let closed = false;
  let rotation = 0;

  const pop = (group: number, timeoutMs: number) => {
    if (popping[group] || closed) return;
    popping[group] = true;
    const connection = (connections[group] ??= quiet(duplicateClient(redis)));
    // BLPOP serves the first non-empty list it is given: start each pop at the next list, so under
    // sustained load no shard's hints wait behind another's.
    const lists = groups[group] as string[];
    const start = rotation++ % lists.length;
    connection.blpop(...lists.slice(start), ...lists.slice(0, start), Math.max(0.01, timeoutMs / 1000)).then(
      (reply) => {
        popping[group] = false;
        // Another caller may have started waiting while this pop ran out: it still needs a pop.
        if (reply === null) {
          if (waiters.length > 0) pop(group, REPEAT_POP_MS);
          return;
        }
        const [list, threadKey] = reply;
        const waiter = waiters.shift();
        if (waiter === undefined) {
          if (!closed) void redis.lpush(list, threadKey).catch(() => {});
          return;
        }
        waiter.claim();
        if (waiter.max <= 1 || closed) return waiter.resolve([threadKey]);
        // The list that answered first (a burst is likely queued behind it), then the group's others.
        const others = lists.filter((each) => each !== list);
        takeReady(1 + others.length, list, ...others, waiter.max - 1).then(
          (more) => waiter.resolve([threadKey, ...more]),
          // The hints it could not take stay listed for the next wait, or another worker's.
          () => waiter.resolve([threadKey]),
        );
      },
      () => {
        // The connection failed: the caller's wait times out and the next wait pops again.
        popping[group] = false;
      },
    );
  };

  return {
    next({ timeoutMs, max }) {
      if (closed) return Promise.resolve([]);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          const index = waiters.indexOf(waiter);
          if (index !== -1) waiters.splice(index, 1);
          resolve([]);
        }, timeoutMs);
        // Claimed when a hint arrives: from then on only the hints end the wait, not the timer.
        const waiter: Waiter = { max, claim: () => clearTimeout(timer), resolve };
        waiters.push(waiter);
        for (let group = 0; group < groups.length; group += 1) pop(group, timeoutMs);
      });
    },
    close() {
      closed = true;
      for (const connection of connections) connection?.disconnect();
      for (const waiter of waiters.splice(0)) {
        waiter.claim();
        waiter.resolve([]);
      }
    },
  };
}
