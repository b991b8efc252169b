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

  function start(options: { multiPopRefusal?: string; username?: string } = {}) {
    const redis = new Redis(inject('redisUrl'), options.username ? { username: options.username, password: 'secret' } : {});
    const { multiPopRefusal } = options;
    if (multiPopRefusal) {
      const duplicate = redis.duplicate.bind(redis);
      redis.duplicate = (...args) => {
        const connection = duplicate(...args);
        connection.blmpop = (() => Promise.reject(new Error(multiPopRefusal))) as typeof connection.blmpop;
        return connection;
      };
    }
    const keys = createRedisKeys({ keyPrefix: `test:${randomUUID()}:` });
    const waiter = createReadyWaiter({ redis, keys });
    opened.push({ redis, waiter });
    const list = keys.shards()[0]?.ready() as string;
    return { redis, waiter, offer: (...threadKeys: string[]) => redis.rpush(list, ...threadKeys) };
  }

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
