import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { createRedisStore } from './redis-store.js';
import { healthReply } from '../runtime/health-check.js';

/**
 * health-check.ts: "`200` while the store answers and takes writes, `503` when it cannot be reached or
 * takes none". README ("Redis persistence") tells operators to set `maxmemory-policy noeviction` "so a full
 * Redis refuses writes instead of dropping state", and ("Scaling out") names `min-replicas-to-write 1` on the
 * primary, which "refuses writes instead". In both states PING and ROLE (master) are still answered, so the
 * probe reports the bot healthy while every write it makes (a click's decision, a turn's save) is refused.
 */
describe('/healthz on a primary that refuses every write', () => {
  let full: RedisServerHandle;
  let noReplicas: RedisServerHandle;
  beforeAll(async () => {
    full = await startRedisServer({ extraArguments: ['--maxmemory-policy', 'noeviction'] });
    noReplicas = await startRedisServer({ extraArguments: ['--min-replicas-to-write', '1'] });
    // Full: memory over maxmemory under noeviction, so every write that may grow memory is refused.
    const filler = new Redis(full.url);
    try {
      await filler.config('SET', 'maxmemory', '1');
      await expect(filler.set('one-more', 'x')).rejects.toThrow(/^OOM\b/);
    } finally {
      filler.disconnect();
    }
  });
  afterAll(async () => {
    await full?.stop();
    await noReplicas?.stop();
  });

  it.each([
    ['full (maxmemory reached, noeviction)', () => full.url, /^OOM\b/, 'OOM'],
    ['min-replicas-to-write 1 with no replica', () => noReplicas.url, /^NOREPLICAS\b/, 'NOREPLICAS'],
  ])('is not 200 while the Redis is %s', async (_name, url, refusal, code) => {
    const store = createRedisStore({ url: url(), keyPrefix: 'test:health-refused:' });
    try {
      const write = await store.claimOnce(['schedule:probe:2026-01-01T00:00'], 60_000).then(
        () => undefined,
        (error: unknown) => error,
      );
      // The bot's own writes are refused...
      expect(write).toBeInstanceOf(Error);
      expect((write as Error).message).toMatch(refusal);
      // ...yet the probe says the bot is fine.
      const reply = await healthReply(store);
      expect(reply.status, reply.body).toBe(503);
      // Only the refusal's code: the rest of Redis's message is not for a public port.
      expect(JSON.parse(reply.body)).toEqual({ status: 'unavailable', store: 'redis', redis: 'refuses-writes', reason: `Redis refuses writes: ${code}` });
    } finally {
      await store.close();
    }
  });
});
