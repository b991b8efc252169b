import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';

describe('throwaway redis-server', () => {
  let redis: RedisServerHandle;
  const clients: Redis[] = [];
  const connect = (url: string) => {
    // No retries: a stopped server should fail the command, not leave the client reconnecting.
    const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    // Refused connections are expected after stop(); the failing command carries the error.
    client.on('error', () => {});
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis.stop();
  });

  it('answers PING on its loopback url', async () => {
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    await expect(connect(redis.url).ping()).resolves.toBe('PONG');
  });

  it('restarts empty on the same port', async () => {
    const before = connect(redis.url);
    await before.set('countersign:test', 'value');
    const port = redis.port;
    await redis.restart();
    expect(redis.port).toBe(port);
    const after = connect(redis.url);
    await expect(after.ping()).resolves.toBe('PONG');
    await expect(after.get('countersign:test')).resolves.toBeNull();
  });

  it('is unreachable while down during a restart', async () => {
    let pingWhileDown: Promise<unknown> | undefined;
    await redis.restart({
      whileDown: async () => {
        pingWhileDown = connect(redis.url).ping();
        await pingWhileDown.catch(() => undefined);
      },
    });
    await expect(pingWhileDown).rejects.toThrow();
    await expect(connect(redis.url).ping()).resolves.toBe('PONG');
  });

  it('keeps its data across restarts with persist: true, and deletes it on stop', async () => {
    const persistent = await startRedisServer({ persist: true });
    try {
      expect(persistent.dataDirectory).toBeDefined();
      await connect(persistent.url).set('countersign:kept', 'value', 'PX', 60_000);
      await persistent.restart();
      await persistent.restart();
      const after = connect(persistent.url);
      await expect(after.get('countersign:kept')).resolves.toBe('value');
      await expect(after.pttl('countersign:kept')).resolves.toBeGreaterThan(0);
    } finally {
      await persistent.stop();
    }
    expect(existsSync(persistent.dataDirectory!)).toBe(false);
    expect(redis.dataDirectory).toBeUndefined();
  });

  it('stops, after which connections are refused', async () => {
    const extra = await startRedisServer();
    await extra.stop();
    await expect(connect(extra.url).ping()).rejects.toThrow();
    await extra.stop();
  });

  it('explains a missing redis-server binary', async () => {
    await expect(startRedisServer({ binary: '/nonexistent/redis-server' })).rejects.toThrow(/redis-server is not installed/);
  });

  it('is provided to every test file by the global setup', async () => {
    const url = inject('redisUrl');
    expect(url).toMatch(/^redis:\/\//);
    await expect(connect(url).ping()).resolves.toBe('PONG');
  });
});
