import type { Cluster, Redis } from 'ioredis';
import { cachedRead } from './cached-read.js';
import { readMasterPersistence } from './cluster-master-persistence.js';
import type { RedisKeys } from './redis-keys.js';
import { readRedisPersistence } from './redis-persistence.js';
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
   * What the primaries keep across a restart, read once (`redis-persistence.ts`), and again once
   * older than `maxAgeMs` (`risks()`: the replicas connected change with a failover). A failed read
   * is not remembered, and a wait Redis refused forgets it (AOF turned off since, a failover to an
   * older server), so the next write asks again.
   */
  const persistence = cachedRead(() => readRedisPersistence({ redis, keys }));
  const readPersistence = ({ maxAgeMs = Number.POSITIVE_INFINITY }: { maxAgeMs?: number } = {}) => persistence.get(maxAgeMs);
  const forgetPersistence = persistence.forget;
  /**
   * The settings of every master of a Cluster's slot map, for the warnings only (`risks()`), read apart
   * from `readPersistence`: the shards' waits never wait on a master holding no shard, nor fail with it.
   */
  const readMasters = cachedRead(() => readMasterPersistence({ redis, keys })).get;
  /**
   * Whether the writes that must not be lost (a call's executing marker, a withdrawal) also wait
   * until the primary has fsynced them to its append-only file: with `appendfsync everysec` (the
   * usual setting) an OS crash or power loss otherwise loses the last second of them. Redis 6 and
   * 7.0 have no WAITAOF: there the file is as fresh as its fsync policy makes it.
   */
  const waitsForDisk = async () => {
    const { appendOnly, waitAof } = await readPersistence();
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
    const disk = await waitsForDisk().catch(notSent);
    if (replicas === 0 && !disk) return { reply: await direct() };
    const written = await confirmedWrites.run({ ...options, disk });
    if (written.waitError) forgetPersistence();
    const notOnDisk = disk && (written.waitError !== undefined || written.onDisk === false);
    if (!written.waitError && written.confirmed >= written.required && !notOnDisk) return { reply: written.reply };
    return { reply: written.reply, unconfirmed: { wanted: written.required, confirmed: written.confirmed, ...(notOnDisk ? { onDisk: false as const } : {}) } };
  };

  return { replicas, waitTimeoutMs, confirmedWrites, readPersistence, forgetPersistence, readMasters, waitsForDisk, withdraw };
}
