import type { Cluster, Redis } from 'ioredis';
import { duplicateClient } from './connect-to-redis.js';
import type { RedisKeys } from './redis-keys.js';

export interface ReadyWaiter {
  /** The next thread handed off to the workers, or undefined after `timeoutMs`; each hint goes to one caller. */
  next(timeoutMs: number): Promise<string | undefined>;
  close(): void;
}

/**
 * Waits on every shard's ready list at once. A blocking pop holds its connection until it
 * answers, so it gets one of its own. One server (or a Sentinel primary) takes one BLPOP over all
 * the lists. A Cluster refuses a BLPOP whose keys lie in different slots, so there each shard gets
 * its own connection and its own BLPOP, all started together: a hint wakes a worker as soon as it
 * is pushed, whichever shard it lands in (polling the shards in turn would add up to a whole round
 * of timeouts to every hand-off). The price is one cluster client per shard per worker process,
 * opened on the first wait. A hint popped after its caller gave up goes back to the head of its
 * list for another worker.
 */
/** The pop started for callers still waiting when an earlier pop ran out; each caller's own timer ends its wait. */
const REPEAT_POP_MS = 1_000;

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
  const waiters: Array<(threadKey: string | undefined) => void> = [];
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
        if (waiter) waiter(threadKey);
        else if (!closed) void redis.lpush(list, threadKey).catch(() => {});
      },
      () => {
        // The connection failed: the caller's wait times out and the next wait pops again.
        popping[group] = false;
      },
    );
  };

  return {
    next(timeoutMs) {
      if (closed) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const waiter = (threadKey: string | undefined) => {
          clearTimeout(timer);
          resolve(threadKey);
        };
        const timer = setTimeout(() => {
          const index = waiters.indexOf(waiter);
          if (index !== -1) waiters.splice(index, 1);
          resolve(undefined);
        }, timeoutMs);
        waiters.push(waiter);
        for (let group = 0; group < groups.length; group += 1) pop(group, timeoutMs);
      });
    },
    close() {
      closed = true;
      for (const connection of connections) connection?.disconnect();
      for (const waiter of waiters.splice(0)) waiter(undefined);
    },
  };
}
