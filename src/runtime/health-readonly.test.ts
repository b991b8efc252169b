import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { createRedisStore } from '../store/redis-store.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';
import { healthReply } from './health-check.js';

/**
 * README: "`GET /healthz` answers `200 {"status":"ok","redis":"up"}`, or `503` when Redis cannot be reached."
 * After a failover behind a plain `redis://` URL (README: "a managed primary with automatic failover behind a
 * `redis://`/`rediss://` URL") the bot's connection can be left on the demoted primary, now a replica: every
 * write fails READONLY, which the bot itself classes as the store being unavailable (`isStoreUnavailable`,
 * "the state store (Redis) is unreachable" in threads), yet the probe's PING is answered and /healthz says up.
 */
describe('/healthz on a Redis that can no longer take writes', () => {
  let primary: RedisServerHandle;
  let demoted: RedisServerHandle;
  beforeAll(async () => {
    primary = await startRedisServer();
    demoted = await startRedisServer({ extraArguments: ['--replicaof', '127.0.0.1', String(primary.port)] });
  });
  afterAll(async () => {
    await demoted?.stop();
    await primary?.stop();
  });

  it('is not 200 "redis up" while every write the bot makes is refused as the store being unavailable', async () => {
    const store = createRedisStore({ url: demoted.url, keyPrefix: 'test:health:' });
    try {
      const write = await store.claimOnce(['schedule:probe:2026-01-01T00:00'], 60_000).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(write).toBeInstanceOf(Error);
      expect(isStoreUnavailable(write)).toBe(true);
      const reply = await healthReply(store);
      expect(reply.status).toBe(503);
      expect(JSON.parse(reply.body)).toEqual({ status: 'unavailable', store: 'redis', redis: 'read-only', reason: 'Redis answers but takes no writes: it is a replica' });
    } finally {
      await store.close();
    }
  });

  it('is 200 on the primary', async () => {
    const store = createRedisStore({ url: primary.url, keyPrefix: 'test:health:' });
    try {
      const reply = await healthReply(store);
      expect(reply.status).toBe(200);
      // A test server keeps neither snapshots nor an append-only file: named, not unhealthy (README "Redis persistence").
      expect(JSON.parse(reply.body)).toEqual({ status: 'ok', store: 'redis', redis: 'up', warnings: ['redis-not-durable'] });
    } finally {
      await store.close();
    }
  });
});
