import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createReadyWaiter, type ReadyWaiter } from './redis-ready-waiter.js';
import { createRedisKeys } from './redis-keys.js';

describe('ready waiter', () => {
  const opened: Array<{ redis: Redis; waiter: ReadyWaiter }> = [];
  afterEach(async () => {
    for (const { redis, waiter } of opened.splice(0)) {
      waiter.close();
      await redis.quit();
    }
  });

  function start(options: { multiPopRefusal?: string; failingPops?: number; username?: string } = {}) {
    const redis = new Redis(inject('redisUrl'), options.username ? { username: options.username, password: 'secret' } : {});
    const { multiPopRefusal } = options;
    let failingPops = options.failingPops ?? 0;
    const connectionErrors: unknown[] = [];
    if (multiPopRefusal || failingPops > 0) {
      const duplicate = redis.duplicate.bind(redis);
      redis.duplicate = (...args) => {
        const connection = duplicate(...args);
        const blmpop = connection.blmpop.bind(connection) as (...popArgs: unknown[]) => unknown;
        connection.blmpop = ((...popArgs: unknown[]) => {
          if (multiPopRefusal) return Promise.reject(new Error(multiPopRefusal));
          if (failingPops > 0) {
            failingPops -= 1;
            return Promise.reject(new Error('Connection is closed.'));
          }
          return blmpop(...popArgs);
        }) as typeof connection.blmpop;
        return connection;
      };
    }
    const keys = createRedisKeys({ keyPrefix: `test:${randomUUID()}:` });
    const waiter = createReadyWaiter({ redis, keys, onConnectionError: (error) => connectionErrors.push(error) });
    opened.push({ redis, waiter });
    const list = keys.shards()[0]?.ready() as string;
    return { redis, waiter, connectionErrors, offer: (...threadKeys: string[]) => redis.rpush(list, ...threadKeys) };
  }

  it('pops again while a caller waits when a pop fails on its connection, instead of leaving the caller to time out', async () => {
    const { waiter, offer, connectionErrors } = start({ failingPops: 2 });
    const waiting = waiter.next({ timeoutMs: 4_000, max: 1 });
    await offer('a');
    expect(await waiting).toEqual(['a']);
    expect(connectionErrors).toHaveLength(2);
  });

  it('takes the hints queued in a list in one wake-up, up to the room asked for, in order', async () => {
    const { waiter, offer } = start();
    await offer('a', 'b', 'c', 'd');
    expect(await waiter.next({ timeoutMs: 5_000, max: 3 })).toEqual(['a', 'b', 'c']);
    expect(await waiter.next({ timeoutMs: 5_000, max: 3 })).toEqual(['d']);
  });

  it('on a Redis 6 server (no BLMPOP), takes one hint a wake-up with BLPOP and loses none', async () => {
    const { waiter, offer } = start({ multiPopRefusal: "ERR unknown command 'blmpop', with args beginning with: " });
    await offer('a', 'b');
    expect(await waiter.next({ timeoutMs: 5_000, max: 3 })).toEqual(['a']);
    expect(await waiter.next({ timeoutMs: 5_000, max: 3 })).toEqual(['b']);
    expect(await waiter.next({ timeoutMs: 50, max: 3 })).toEqual([]);
  });

  it('for an ACL user refused BLMPOP, takes one hint a wake-up with BLPOP and loses none', async () => {
    const admin = new Redis(inject('redisUrl'));
    const username = `worker-${randomUUID()}`;
    await admin.call('ACL', 'SETUSER', username, 'on', '>secret', '~*', '&*', '+@all', '-blmpop');
    try {
      const { waiter, offer } = start({ username });
      await offer('a', 'b');
      expect(await waiter.next({ timeoutMs: 5_000, max: 3 })).toEqual(['a']);
      expect(await waiter.next({ timeoutMs: 5_000, max: 3 })).toEqual(['b']);
    } finally {
      await admin.call('ACL', 'DELUSER', username);
      await admin.quit();
    }
  });
});
