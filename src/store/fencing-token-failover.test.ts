import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { createRedisStore } from './redis-store.js';
import type { StateStore } from './state-store.js';

/**
 * Review: a fencing token issued on the primary but not yet replicated is lost when the replica is
 * promoted, and the promoted replica issues the next token from what it has. Same relay as
 * executing-marker-failover.test.ts: the replica replicates through it, and a test can hold the
 * stream back for the last instant before the primary dies.
 */
let primary: RedisServerHandle;
let replica: RedisServerHandle;
let link: Server;
let lagging = false;

beforeEach(async () => {
  lagging = false;
  primary = await startRedisServer();
  link = createServer((fromReplica) => {
    const toPrimary = connect(primary.port, '127.0.0.1');
    fromReplica.on('data', (chunk) => toPrimary.write(chunk));
    toPrimary.on('data', (chunk) => {
      if (!lagging) fromReplica.write(chunk);
    });
    const end = () => {
      fromReplica.destroy();
      toPrimary.destroy();
    };
    fromReplica.on('error', end).on('close', end);
    toPrimary.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => link.listen(0, '127.0.0.1', resolve));
  replica = await startRedisServer({ extraArguments: ['--replicaof', '127.0.0.1', String((link.address() as AddressInfo).port)] });
  const raw = new Redis(primary.url);
  try {
    for (let attempt = 0; Number(await raw.call('WAIT', '1', '200')) !== 1; attempt += 1) if (attempt > 50) throw new Error('replica never connected');
  } finally {
    raw.disconnect();
  }
}, 30_000);

afterEach(async () => {
  link?.close();
  await Promise.all([replica?.stop(), primary?.stop().catch(() => {})]);
});

/** Everything written so far is on the replica (what WAIT 1 confirms), then the stream is held back. */
async function replicatedThenLagging(): Promise<void> {
  const raw = new Redis(primary.url);
  try {
    expect(await raw.call('WAIT', '1', '5000')).toBe(1);
  } finally {
    raw.disconnect();
  }
  lagging = true;
}

/** The primary dies; the replica is promoted (what Sentinel does); a store on it. */
async function failover(keyPrefix: string): Promise<StateStore> {
  await primary.stop({ signal: 'SIGKILL' });
  const promote = new Redis(replica.url);
  try {
    await promote.call('REPLICAOF', 'NO', 'ONE');
  } finally {
    promote.disconnect();
  }
  return createRedisStore({ url: replica.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 500 });
}

describe('fencing tokens across a failover that lost the newest token', () => {
  it('never hands the same token to two holders (B took the thread on the old primary, C on the promoted replica)', async () => {
    const keyPrefix = `token-failover:${randomUUID()}:`;
    const threadKey = 'T1:CTOKEN:1700000000.000100';
    // Process A's clock runs 5 s ahead (a drifting VM); B and C are right.
    const a = createRedisStore({ url: primary.url, keyPrefix, now: () => Date.now() + 5_000 });
    const b = createRedisStore({ url: primary.url, keyPrefix });
    let c: StateStore | undefined;
    try {
      const tokenA = (await a.tryLock(threadKey, 60_000))!;
      expect(await a.releaseLockIfIdle({ threadKey, token: tokenA }, 60_000)).toBe('released');
      await replicatedThenLagging();
      // B takes the thread on the primary; the primary dies before the replica has it.
      const tokenB = (await b.tryLock(threadKey, 60_000))!;
      c = await failover(keyPrefix);
      const tokenC = (await c.tryLock(threadKey, 60_000))!;
      expect(tokenC).toBeDefined();
      // B reconnects to the promoted replica (as a Sentinel client does) and checks its fence before acting.
      const bAfter = createRedisStore({ url: replica.url, keyPrefix });
      try {
        expect(await c.fenceState({ threadKey, token: tokenC })).toBe('current');
        expect(await bAfter.fenceState({ threadKey, token: tokenB }), `B (token ${tokenB}) and C (token ${tokenC}) both hold the thread`).not.toBe('current');
      } finally {
        await bAfter.close();
      }
    } finally {
      lagging = false;
      await a.close();
      await b.close();
      await c?.close();
    }
  }, 30_000);
});
