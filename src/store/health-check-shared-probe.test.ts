import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { createRedisStore } from './redis-store.js';
import { createHealthServer } from '../runtime/health-check.js';

/**
 * README (Metrics): `/metrics` "is not served on the port Slack posts to: there anyone could ... make the bot
 * read its open steps from Redis at each request". `/healthz` is served there (the Slack front's PORT, which
 * the load balancer exposes), and since the write probe (redis-write-probe.ts) each anonymous GET makes the
 * bot write to Redis (SET ... PX, replicated, appended to the AOF: an fsync per request under
 * `appendfsync always`), with nothing shared between concurrent checks: a burst of requests from the internet
 * becomes the same number of Redis writes, in line with the bot's own.
 */
describe('/healthz requests from anyone', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer({ extraArguments: ['--appendonly', 'yes', '--appendfsync', 'always'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('do not each become a Redis write', async () => {
    const store = createRedisStore({ url: server.url, keyPrefix: 'test:health-public:' });
    const health = createHealthServer({ store, servedBy: 'test' });
    await new Promise<void>((resolve) => health.listen(0, '127.0.0.1', resolve));
    const port = (health.address() as AddressInfo).port;
    const admin = new Redis(server.url);
    const setCalls = async () => Number(/cmdstat_set:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    const get = () =>
      new Promise<number>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path: '/healthz' }, (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        })
          .on('error', reject)
          .end();
      });
    try {
      expect(await get()).toBe(200);
      const before = await setCalls();
      const statuses = await Promise.all(Array.from({ length: 200 }, get));
      expect(statuses.every((status) => status === 200)).toBe(true);
      const writes = (await setCalls()) - before;
      expect(writes, `${writes} Redis writes for 200 anonymous health checks`).toBeLessThanOrEqual(10);
    } finally {
      await new Promise((resolve) => health.close(resolve));
      admin.disconnect();
      await store.close();
    }
  });
});
