import type { Cluster, Redis } from 'ioredis';
import { cachedRead } from './cached-read.js';
import { keepMasterPersistence, readMasterPersistence } from './cluster-master-persistence.js';
import type { RedisKeys } from './redis-keys.js';
import { readPrimaryPersistence, type RedisPersistence } from './redis-persistence.js';
import { createReplicaConfirmedWrites, defaultReplicasToWaitFor } from './replica-confirmed-write.js';
import type { ReplicaShortfall } from './state-store.js';
import { notSent } from './write-not-run.js';

/**
 * The writes that must not be lost (a call's executing marker, a withdrawal of authority): how many
 * replicas they wait for, whether they also wait for the primary's append-only file, and what the
 * primaries keep across a restart, read from Redis and kept a while.
 */
export type RedisDurableWrites = ReturnType<typeof createRedisDurableWrites>;

export function createRedisDurableWrites({
  redis,
  keys,
  waitReplicas,
  waitTimeoutMs,
  reportConnectionError,
}: {
  redis: Redis | Cluster;
  keys: RedisKeys;
  waitReplicas: number | undefined;
  waitTimeoutMs: number;
  reportConnectionError: (error: unknown) => void;
}) {
  const replicas = waitReplicas ?? defaultReplicasToWaitFor(redis);
  // Its connection opens on the first write that waits: never, with no replica to wait for and no append-only file.
  const confirmedWrites = createReplicaConfirmedWrites({ redis, replicas, timeoutMs: waitTimeoutMs, onConnectionError: reportConnectionError });

  /**
   * What each shard's primary keeps across a restart (`readPrimaryPersistence`, routed by a key of the
   * shard in a Cluster; one read for every shard of one server), read once, and again once older than
   * `maxAgeMs` (`risks()`: the replicas connected change with a failover). Per shard: a shard's markers
   * and withdrawals wait as its own primary says, so a primary whose settings cannot be read refuses the
   * writes of the shards it holds, not every shard's. A failed read is not remembered, and a wait Redis
   * refused forgets its shard's (AOF turned off since, a failover to an older server), so the next write asks again.
   */
  const perShard = redis.isCluster ? keys.shards().map((shard) => cachedRead(() => readPrimaryPersistence({ client: redis, route: shard.ready() }))) : [cachedRead(() => readPrimaryPersistence({ client: redis }))];
  const persistenceOf = (shard: number) => perShard[redis.isCluster ? shard : 0] as (typeof perShard)[number];
  const readPersistence = (shard: number, { maxAgeMs = Number.POSITIVE_INFINITY }: { maxAgeMs?: number } = {}) => persistenceOf(shard).get(maxAgeMs);
  const forgetPersistence = (shard: number) => persistenceOf(shard).forget();
  /** Every shard's primary's settings (`risks()`): those read, and the errors of those that would not say. */
  const readShards = async (maxAgeMs: number): Promise<{ read: RedisPersistence[]; errors: unknown[] }> => {
    const settled = await Promise.allSettled(perShard.map((read) => read.get(maxAgeMs)));
    return {
      read: settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])),
      errors: settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : [])),
    };
  };
  /**
   * The settings of every master of a Cluster's slot map, for the warnings only (`risks()`), read apart
   * from the shards' reads: the shards' waits never wait on a master holding no shard, nor fail with it.
   * A read that found a master down is not kept (`keepMasterPersistence`): the next check sees it back.
   */
  const readMasters = cachedRead(() => readMasterPersistence({ redis, keys }), { keep: keepMasterPersistence }).get;
  /**
   * Whether the writes that must not be lost (a call's executing marker, a withdrawal) in `shard` also
   * wait until its primary has fsynced them to its append-only file: with `appendfsync everysec` (the
   * usual setting) an OS crash or power loss otherwise loses the last second of them. Redis 6 and
   * 7.0 have no WAITAOF: there the file is as fresh as its fsync policy makes it. Rejects while the
   * shard's primary would not say: such a write is then not sent.
   */
  const waitsForDisk = async (shard: number) => {
    const { appendOnly, waitAof } = await readPersistence(shard);
    return appendOnly === true && waitAof;
  };

  /**
   * Runs a script that withdraws authority (a `withdraws` step commit, a grant's revoke) as a call's
   * executing marker is written: with a WAIT for the replicas (and a WAITAOF for the primary's
   * append-only file, see `waitsForDisk`), on the confirmed writes' connection. `direct` is the
   * plain write, when nothing is waited for. Fewer confirmations than required leave the write
   * standing (it took effect on the primary): the caller tells the person.
   */
  const withdraw = async (options: { shard: number; script: string; keys: readonly string[]; args: ReadonlyArray<string | number> }, direct: () => Promise<unknown>): Promise<{ reply: unknown; unconfirmed?: ReplicaShortfall }> => {
    // Before the write: failing here, it was never sent.
    const disk = await waitsForDisk(options.shard).catch(notSent);
    if (replicas === 0 && !disk) return { reply: await direct() };
    const written = await confirmedWrites.run({ ...options, disk });
    if (written.waitError) forgetPersistence(options.shard);
    const notOnDisk = disk && (written.waitError !== undefined || written.onDisk === false);
    if (!written.waitError && written.confirmed >= written.required && !notOnDisk) return { reply: written.reply };
    return { reply: written.reply, unconfirmed: { wanted: written.required, confirmed: written.confirmed, ...(notOnDisk ? { onDisk: false as const } : {}) } };
  };

  return { replicas, waitTimeoutMs, confirmedWrites, readShards, forgetPersistence, readMasters, waitsForDisk, withdraw };
}
