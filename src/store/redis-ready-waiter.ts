import type { Cluster, Redis } from 'ioredis';
import { duplicateClient } from './connect-to-redis.js';
import type { RedisKeys } from './redis-keys.js';

export interface ReadyWaiter {
  /**
   * Threads handed off to the workers: at least one, up to `max`, or none after `timeoutMs`; each
   * hint goes to one caller.
   */
  next(options: { timeoutMs: number; max: number; signal?: AbortSignal }): Promise<string[]>;
  close(): void;
}

interface Waiter {
  max: number;
  resolve(threadKeys: string[]): void;
}

/** The pop started for callers still waiting when an earlier pop ran out; each caller's own timer ends its wait. */
const REPEAT_POP_MS = 1_000;
/** Pause before popping again after a pop failed, so a refusing server is not asked in a tight loop. */
const RETRY_POP_MS = 250;

/**
 * Waits on every shard's ready list at once. A blocking pop holds its connection until it
 * answers, so it gets one of its own. One server (or a Sentinel primary) takes one BLPOP over all
 * the lists. A Cluster refuses a BLPOP whose keys lie in different slots, so there each shard gets
 * its own connection and its own BLPOP, all started together: a hint wakes a worker as soon as it
 * is pushed, whichever shard it lands in (polling the shards in turn would add up to a whole round
 * of timeouts to every hand-off). The price is one cluster client per shard per worker process,
 * opened on the first wait. A hint popped after its caller gave up goes back to the head of its
 * list for another worker. A caller with room for more than one takes the hints queued in the
 * list that answers, up to its room, in the same blocking pop (BLMPOP … COUNT, Redis 7; BLPOP, one
 * hint, on an older server): a burst of hand-offs is picked up in one wake-up instead of one round
 * trip, and one turn of a busy event loop, per hint.
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
  // BLMPOP (Redis 7) takes a burst in the one blocking call; where it is refused, BLPOP takes one a wake-up.
  let multiPop = true;
  let closed = false;
  let rotation = 0;

  /** Hands popped hints to the waiters in order, each up to its room; what nobody takes goes back to the list's head. */
  const deliver = (list: string, threadKeys: string[]) => {
    let rest = threadKeys;
    while (rest.length > 0 && waiters.length > 0) {
      const waiter = waiters.shift() as Waiter;
      waiter.resolve(rest.slice(0, Math.max(1, waiter.max)));
      rest = rest.slice(Math.max(1, waiter.max));
    }
    if (rest.length > 0 && !closed) void redis.lpush(list, ...rest.reverse()).catch(() => {});
  };

  const pop = (group: number, timeoutMs: number) => {
    if (popping[group] || closed) return;
    popping[group] = true;
    const connection = (connections[group] ??= quiet(duplicateClient(redis)));
    // A blocking pop serves the first non-empty list it is given: start each pop at the next list,
    // so under sustained load no shard's hints wait behind another's.
    const lists = groups[group] as string[];
    const start = rotation++ % lists.length;
    const ordered = [...lists.slice(start), ...lists.slice(0, start)];
    const seconds = Math.max(0.01, timeoutMs / 1000);
    const room = Math.max(1, waiters[0]?.max ?? 1);
    const popped: Promise<[string, string[]] | null> = multiPop
      ? connection.blmpop(seconds, ordered.length, ...ordered, 'LEFT', 'COUNT', room)
      : connection.blpop(...ordered, seconds).then((reply) => (reply === null ? null : [reply[0], [reply[1]]]));
    popped.then(
      (reply) => {
        popping[group] = false;
        if (reply !== null) return deliver(reply[0], reply[1]);
        // Another caller may have started waiting while this pop ran out: it still needs a pop.
        if (waiters.length > 0) pop(group, REPEAT_POP_MS);
      },
      (error: unknown) => {
        popping[group] = false;
        // Redis 6 does not know BLMPOP; an ACL user may be refused it (NOPERM). Either way BLPOP still serves.
        if (multiPop && error instanceof Error && /unknown command|NOPERM/i.test(error.message)) {
          multiPop = false;
          if (waiters.length > 0) pop(group, timeoutMs);
          return;
        }
        // The connection failed (a cluster client still learning its slots on a busy machine, a
        // reconnect): a caller waiting for a hand-off must not sit out its whole wait because one pop
        // did, so pop again shortly while anyone still waits.
        if (closed) return;
        onConnectionError?.(error);
        setTimeout(() => {
          if (waiters.length > 0) pop(group, REPEAT_POP_MS);
        }, RETRY_POP_MS).unref();
      },
    );
  };

  return {
    next({ timeoutMs, max, signal }) {
      if (closed || signal?.aborted) return Promise.resolve([]);
      return new Promise((resolve) => {
        // The pop under way carries on; what it takes once nobody waits goes back to its list (`deliver`).
        const giveUp = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', giveUp);
          const index = waiters.indexOf(waiter);
          if (index !== -1) waiters.splice(index, 1);
          resolve([]);
        };
        const timer = setTimeout(giveUp, timeoutMs);
        const waiter: Waiter = {
          max,
          resolve: (threadKeys) => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', giveUp);
            resolve(threadKeys);
          },
        };
        waiters.push(waiter);
        signal?.addEventListener('abort', giveUp, { once: true });
        for (let group = 0; group < groups.length; group += 1) pop(group, timeoutMs);
      });
    },
    close() {
      closed = true;
      for (const connection of connections) connection?.disconnect();
      for (const waiter of waiters.splice(0)) waiter.resolve([]);
    },
  };
}
