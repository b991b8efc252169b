import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { healthReply } from '../runtime/health-check.js';
import { infoField } from './redis-persistence.js';
import { createRedisStore } from './redis-store.js';

/**
 * A snapshot-only primary whose one replica goes away: with COUNTERSIGN_REDIS_WAIT_REPLICAS=1 a
 * call's marker then waits for no replica (the wait covers only connected ones), so `/healthz`
 * must come to name `redis-not-durable`, from a read of the primary's settings that `risks()`
 * refreshes now and then, not on every hit.
 */
/** Polls `probe` until it is true: a real barrier, not a fixed sleep. */
async function waitFor(probe: () => Promise<boolean>, { timeoutMs, message }: { timeoutMs: number; message: string }): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the store risks of a primary whose replica goes away', () => {
  let primary: RedisServerHandle;
  let replica: RedisServerHandle;
  let admin: Redis;
  const connectedReplicas = async () => Number(infoField(await admin.info('replication'), 'connected_slaves'));
  const infoCalls = async () => Number(/calls=(\d+)/.exec(infoField(await admin.info('commandstats'), 'cmdstat_info') ?? '')?.[1] ?? 0);

  beforeAll(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer({ extraArguments: ['--replicaof', '127.0.0.1', String(primary.port)] });
    admin = new Redis(primary.url);
    await waitFor(async () => (await connectedReplicas()) === 1, { timeoutMs: 15_000, message: 'the replica to connect' });
  });
  afterAll(async () => {
    admin?.disconnect();
    await Promise.all([replica?.stop(), primary?.stop()]);
  });

  it('is read again once older than its max age, and not on every /healthz before that', async () => {
    const cached = createRedisStore({ url: primary.url, waitReplicas: 1, keyPrefix: `risks:${randomUUID()}:` });
    const refreshed = createRedisStore({ url: primary.url, waitReplicas: 1, keyPrefix: `risks:${randomUUID()}:`, risksMaxAgeMs: 200 });
    try {
      // A connected replica confirms every marker: nothing to warn of.
      expect(await cached.risks()).toEqual([]);
      expect(await refreshed.risks()).toEqual([]);
      const before = await infoCalls();
      for (let hit = 0; hit < 5; hit += 1) expect(JSON.parse((await healthReply(cached)).body).warnings).toBeUndefined();
      // The INFO this test just sent is the only one since.
      expect(await infoCalls()).toBe(before + 1);

      await replica.stop();
      await waitFor(async () => (await connectedReplicas()) === 0, { timeoutMs: 15_000, message: 'the primary to lose its replica' });
      // Read again after its max age: the replica is gone, and so is what kept the markers.
      await waitFor(async () => (await refreshed.risks()).map((risk) => risk.code).includes('redis-not-durable'), { timeoutMs: 5_000, message: 'the warning' });
      expect(JSON.parse((await healthReply(refreshed)).body).warnings).toEqual(['redis-not-durable']);
      // Within its max age (60 s by default), the earlier read stands.
      expect(await cached.risks()).toEqual([]);
    } finally {
      await Promise.all([cached.close(), refreshed.close()]);
    }
  }, 60_000);
});
