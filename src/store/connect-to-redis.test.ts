import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, type Redis } from 'ioredis';
import { describe, expect, inject, it, vi } from 'vitest';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { startRedisServer } from '../../test/helpers/redis-server.js';
import { connectRedisClient, createRedisClient, duplicateClient } from './connect-to-redis.js';

const target = (url: string) => parseRedisTarget(url) as RedisTarget;
const lazy = { lazyConnect: true };

/** ioredis's own options, as its connectors will use them (nothing is connected). */
describe('Redis clients for each REDIS_URL form', () => {
  it('gives every cluster node TLS and the ACL user, and keeps them on the blocking duplicate', () => {
    const client = createRedisClient(target('rediss+cluster://bot:s3cret@10.0.0.1:7000,10.0.0.2:7001'), lazy, lazy) as Cluster;
    expect(client).toBeInstanceOf(Cluster);
    expect(client.options.redisOptions).toMatchObject({ username: 'bot', password: 's3cret', tls: {} });
    // Certificates name the configuration endpoint, not each node's address: the name is kept.
    let resolved: string | undefined;
    client.options.dnsLookup?.('clustercfg.example.cache.amazonaws.com', (_error, address) => (resolved = address));
    expect(resolved).toBe('clustercfg.example.cache.amazonaws.com');
    const duplicate = duplicateClient(client) as Cluster;
    expect(duplicate).toBeInstanceOf(Cluster);
    expect(duplicate.options.redisOptions).toMatchObject({ username: 'bot', password: 's3cret', tls: {} });
    client.disconnect();
    duplicate.disconnect();
  });

  it('gives the sentinels and the primary TLS, and each its own credentials', () => {
    const client = createRedisClient(target('rediss+sentinel://bot:s3cret@s1:26379,s2:26380/mymaster/2?sentinelUsername=watch&sentinelPassword=w4tch'), lazy) as Redis;
    expect(client.options).toMatchObject({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      name: 'mymaster',
      db: 2,
      username: 'bot',
      password: 's3cret',
      sentinelUsername: 'watch',
      sentinelPassword: 'w4tch',
      tls: {},
      enableTLSForSentinelMode: true,
      sentinelTLS: {},
    });
    expect(duplicateClient(client).options).toMatchObject({ name: 'mymaster', username: 'bot', sentinelPassword: 'w4tch', enableTLSForSentinelMode: true });
    client.disconnect();
  });

  it('leaves a plain URL to ioredis: TLS, user, password and database come from it', () => {
    const client = createRedisClient(target('rediss://bot:s3cret@cache.example:6380/3'), lazy) as Redis;
    expect(client.options).toMatchObject({ host: 'cache.example', port: 6380, username: 'bot', password: 's3cret', db: 3 });
    expect(client.options.tls).toBeTruthy();
    client.disconnect();
  });

  it('sends no TLS options without the rediss+ scheme', () => {
    const client = createRedisClient(target('redis+cluster://10.0.0.1:7000'), lazy, lazy) as Cluster;
    expect(client.options.redisOptions?.tls).toBeUndefined();
    client.disconnect();
  });
});

describe('a client whose connector cut a connect short', () => {
  /**
   * What Sentinel's failover detector does when a failover is announced while the client reconnects:
   * it disconnects the connector under the connect attempt (`connector.disconnect()`), and ioredis
   * ends the client instead of retrying. Deterministic here on a plain server: the same call, made
   * while the client is connecting.
   */
  async function cutWhileConnecting(redis: Redis): Promise<void> {
    const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
    void redis.connect().catch(() => {});
    (redis as unknown as { connector: { disconnect(): void } }).connector.disconnect();
    await ended;
  }

  async function pingWithin(redis: Redis, timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await redis.ping();
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  it('connects again by itself, so commands work once more (the bot and its blocking duplicate)', async () => {
    const redis = connectRedisClient({ kind: 'standalone', url: inject('redisUrl') }, { lazyConnect: true }) as Redis;
    const blocking = duplicateClient(redis) as Redis;
    // The store's duplicates get a listener where they are made (the ready waiter's `quiet`).
    blocking.on('error', () => {});
    try {
      for (const client of [redis, blocking]) {
        await cutWhileConnecting(client);
        expect(await pingWithin(client, 5_000)).toBe('PONG');
      }
    } finally {
      redis.disconnect();
      blocking.disconnect();
    }
  });

  it('through Sentinel: the cut lands while the connector asks the sentinel for the primary, and the client connects again', async () => {
    // A sentinel watching the tests' server, so the connect goes through ioredis's SentinelConnector,
    // where the failover detector's disconnect lands in the real case.
    const directory = mkdtempSync(join(tmpdir(), 'countersign-sentinel-unit-'));
    const primary = new URL(inject('redisUrl'));
    const config = join(directory, 'sentinel.conf');
    writeFileSync(config, `sentinel monitor primary ${primary.hostname} ${primary.port} 1\n`);
    const sentinel = await startRedisServer({ leadingArguments: [config, '--sentinel'], extraArguments: ['--dir', directory] });
    const redis = connectRedisClient(target(`redis+sentinel://127.0.0.1:${sentinel.port}/primary`), { lazyConnect: true }) as Redis;
    try {
      await cutWhileConnecting(redis);
      expect(await pingWithin(redis, 5_000)).toBe('PONG');
    } finally {
      redis.disconnect();
      await sentinel.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('stays closed when the bot closed it, also in the middle of connecting', async () => {
    const redis = connectRedisClient({ kind: 'standalone', url: inject('redisUrl') }, { lazyConnect: true }) as Redis;
    await redis.connect();
    expect(await redis.ping()).toBe('PONG');
    const closedWhileConnecting = connectRedisClient({ kind: 'standalone', url: inject('redisUrl') }, { lazyConnect: true }) as Redis;
    // Timers faked from here: whatever reconnect the ends schedule runs below, at once, not after a sleep.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const ended = Promise.all([redis, closedWhileConnecting].map((client) => new Promise<void>((resolve) => client.once('end', () => resolve()))));
      redis.disconnect();
      void closedWhileConnecting.connect().catch(() => {});
      closedWhileConnecting.disconnect();
      await ended;
      vi.runOnlyPendingTimers();
      // connect() would have set `connecting` at once.
      expect([redis.status, closedWhileConnecting.status]).toEqual(['end', 'end']);
    } finally {
      vi.useRealTimers();
    }
  });
});
