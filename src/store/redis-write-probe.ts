import { randomUUID } from 'node:crypto';
import { ReplyError, type Cluster, type Redis } from 'ioredis';
import { createProbeKeyPerMaster } from './probe-key-per-master.js';
import type { RedisKeys } from './redis-keys.js';
import { WritesRefusedError } from './writes-refused-error.js';

/** A probe key outlives the process that wrote it by this long at most. */
const PROBE_TTL_MS = 60_000;

/**
 * The write `/healthz` makes: one small SET with a short expiry (PX) per primary the bot writes to
 * (one on a standalone or Sentinel Redis, one per master of the slot map in a Cluster:
 * `probe-key-per-master.ts`), sent together. PING and ROLE are answered by a Redis that refuses every write
 * (OOM at maxmemory with noeviction, NOREPLICAS under `min-replicas-to-write`, MISCONF after a
 * failed snapshot); the SET is refused the same way the bot's own writes are. Each process writes
 * its own key (`healthProbe`), so probes of several processes never race; the keys expire by
 * themselves, and the scans that look for data skip them (`isHealthProbeKey`).
 * A refusal (an error reply) is thrown as `WritesRefusedError`; READONLY stays as it is (a replica).
 */
export function createWriteProbe({ redis, keys }: { redis: Redis | Cluster; keys: RedisKeys }): () => Promise<void> {
  const processId = randomUUID();
  const perMaster = createProbeKeyPerMaster({ keys, processId });
  const probeKeys = () => (redis.isCluster ? perMaster((redis as Cluster).slots) : [keys.shard(0).healthProbe(processId)]);
  return async () => {
    try {
      await Promise.all(probeKeys().map((key) => redis.set(key, '1', 'PX', PROBE_TTL_MS)));
    } catch (error) {
      if (error instanceof ReplyError && !/^READONLY\b/.test((error as Error).message)) throw new WritesRefusedError(error as Error);
      throw error;
    }
  };
}
