import { type Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { connectRedisClient } from './connect-to-redis.js';
import { createRedisKeys } from './redis-keys.js';
import { combinePersistence, infoField, persistenceRisks, readPrimaryPersistence } from './redis-persistence.js';

const keys = createRedisKeys({ keyPrefix: 'test:persistence:' });

describe('what an operator is told about Redis persistence', () => {
  it('warns when neither an append-only file nor a replica keeps what the last snapshot lacks', () => {
    const [risk, ...more] = persistenceRisks({ persistence: { appendOnly: false, waitAof: false, evictionPolicy: 'noeviction', replicas: 0 }, waitReplicas: 0 });
    expect(more).toEqual([]);
    expect(risk?.code).toBe('redis-not-durable');
    expect(risk?.message).toContain('an approved call may run twice');
    expect(risk?.message).toContain('`appendonly yes`');
    // A Redis that would not say is not taken for a durable one.
    expect(persistenceRisks({ persistence: { appendOnly: undefined, waitAof: false, evictionPolicy: 'noeviction', replicas: 0 }, waitReplicas: 0 }).map((found) => found.code)).toEqual(['redis-not-durable']);
  });

  it('says nothing with `appendonly yes`, or with a connected replica that must confirm the marker', () => {
    expect(persistenceRisks({ persistence: { appendOnly: true, waitAof: false, evictionPolicy: 'noeviction', replicas: 0 }, waitReplicas: 0 })).toEqual([]);
    expect(persistenceRisks({ persistence: { appendOnly: true, waitAof: false, evictionPolicy: 'noeviction', replicas: 0 }, waitReplicas: 1 })).toEqual([]);
    expect(persistenceRisks({ persistence: { appendOnly: false, waitAof: false, evictionPolicy: 'noeviction', replicas: 1 }, waitReplicas: 1 })).toEqual([]);
    // A count the primary would not say (INFO refused) is not warned of.
    expect(persistenceRisks({ persistence: { appendOnly: false, waitAof: false, evictionPolicy: 'noeviction', replicas: undefined }, waitReplicas: 1 })).toEqual([]);
  });

  it('warns when the replicas the marker waits for are not connected: the wait covers only connected ones', () => {
    const [risk, ...more] = persistenceRisks({ persistence: { appendOnly: false, waitAof: false, evictionPolicy: 'noeviction', replicas: 0 }, waitReplicas: 1 });
    expect(more).toEqual([]);
    expect(risk?.code).toBe('redis-not-durable');
    expect(risk?.message).toContain('connected_slaves:0');
    expect(risk?.message).toContain('COUNTERSIGN_REDIS_WAIT_REPLICAS=1 waits only for connected ones');
    // Connected replicas that nothing waits for keep nothing either.
    expect(persistenceRisks({ persistence: { appendOnly: false, waitAof: false, evictionPolicy: 'noeviction', replicas: 2 }, waitReplicas: 0 }).map((found) => found.code)).toEqual(['redis-not-durable']);
  });

  it('warns when Redis may evict keys (every countersign key has a TTL), and says to set noeviction', () => {
    const [risk, ...more] = persistenceRisks({ persistence: { appendOnly: true, waitAof: false, evictionPolicy: 'volatile-lru', replicas: 0 }, waitReplicas: 0 });
    expect(more).toEqual([]);
    expect(risk?.code).toBe('redis-evicts-keys');
    expect(risk?.message).toContain('maxmemory-policy volatile-lru');
    expect(risk?.message).toContain('Set maxmemory-policy noeviction');
    expect(persistenceRisks({ persistence: { appendOnly: true, waitAof: false, evictionPolicy: undefined, replicas: 0 }, waitReplicas: 0 })).toEqual([]);
    // Both at once, each with its own code.
    expect(persistenceRisks({ persistence: { appendOnly: false, waitAof: false, evictionPolicy: 'allkeys-lru', replicas: 0 }, waitReplicas: 0 }).map((found) => found.code)).toEqual(['redis-not-durable', 'redis-evicts-keys']);
  });

  it('reads INFO fields', () => {
    expect(infoField('# Persistence\r\nloading:0\r\naof_enabled:1\r\n', 'aof_enabled')).toBe('1');
    expect(infoField('# Persistence\r\naof_enabled_x:1\r\n', 'aof_enabled')).toBeUndefined();
  });
});

describe('reading a Redis its persistence', () => {
  let withAof: RedisServerHandle;
  let snapshotsOnly: RedisServerHandle;
  let evicting: RedisServerHandle;
  beforeAll(async () => {
    [withAof, snapshotsOnly, evicting] = await Promise.all([
      startRedisServer({ persist: true }),
      startRedisServer(),
      // As ElastiCache, Memorystore and Azure Cache run by default.
      startRedisServer({ extraArguments: ['--maxmemory', '100mb', '--maxmemory-policy', 'volatile-lru'] }),
    ]);
    // A user without INFO, as some managed offerings' restricted users are.
    const admin = new Redis(snapshotsOnly.url);
    await admin.call('ACL', 'SETUSER', 'bot', 'on', '>secret', '~*', '&*', '+@all', '-info');
    admin.disconnect();
  });
  afterAll(async () => {
    await Promise.all([withAof?.stop(), snapshotsOnly?.stop(), evicting?.stop()]);
  });

  async function read(url: string) {
    // No ready check: it runs INFO, which the restricted user may not.
    const redis = new Redis(url, { enableReadyCheck: false });
    try {
      const waitAof = await redis.call('WAITAOF', '0', '0', '0').then(
        () => true,
        () => false,
      );
      return { persistence: await readPrimaryPersistence({ client: redis }), waitAof };
    } finally {
      redis.disconnect();
    }
  }

  it('finds `appendonly yes`, and WAITAOF where the server has it (Redis 7.2+)', async () => {
    const { persistence, waitAof } = await read(withAof.url);
    expect(persistence).toEqual({ appendOnly: true, waitAof, evictionPolicy: 'noeviction', replicas: 0 });
  });

  it('finds snapshots only, and takes an INFO refused by an ACL for "would not say"', async () => {
    expect((await read(snapshotsOnly.url)).persistence.appendOnly).toBe(false);
    const restricted = new URL(snapshotsOnly.url);
    restricted.username = 'bot';
    restricted.password = 'secret';
    expect((await read(restricted.toString())).persistence.appendOnly).toBeUndefined();
  });

  it('finds an eviction policy', async () => {
    expect((await read(evicting.url)).persistence.evictionPolicy).toBe('volatile-lru');
    expect((await read(snapshotsOnly.url)).persistence.evictionPolicy).toBe('noeviction');
  });

  it('asks every primary of a Cluster', async () => {
    const cluster = connectRedisClient(parseRedisTarget(inject('redisClusterUrl')) as RedisTarget) as Cluster;
    try {
      await cluster.ping();
      const masters = cluster.nodes('master');
      const each = await Promise.all(masters.map(async (node) => infoField(await node.info('persistence'), 'aof_enabled') === '1'));
      // Each shard's primary, routed by a key of the shard (as `redis-durable-writes.ts` reads them), combined.
      const persistence = combinePersistence(await Promise.all(keys.shards().map((shard) => readPrimaryPersistence({ client: cluster, route: shard.ready() }))));
      expect(persistence.appendOnly).toBe(each.every(Boolean) ? true : each.some((enabled) => !enabled) ? false : undefined);
    } finally {
      cluster.disconnect();
    }
  });
});
