import { randomUUID } from 'node:crypto';
import { ReplyError, type Cluster, type Redis } from 'ioredis';
import { clusterSlot, type RedisKeys } from './redis-keys.js';
import { WritesRefusedError } from './writes-refused-error.js';

/** A probe key outlives the process that wrote it by this long at most. */
const PROBE_TTL_MS = 60_000;

/**
 * The write `/healthz` makes: one small SET with a short expiry (PX) per primary the bot's shards
 * live on (one on a standalone or Sentinel Redis, one per master holding a shard in a Cluster),
 * sent together, so one round trip. PING and ROLE are answered by a Redis that refuses every write
 * (OOM at maxmemory with noeviction, NOREPLICAS under `min-replicas-to-write`, MISCONF after a
 * failed snapshot); the SET is refused the same way the bot's own writes are. Each process writes
 * its own key (`healthProbe`), so probes of several processes never race; the keys expire by
 * themselves, and the scans that look for data skip them (`isHealthProbeKey`).
 * A refusal (an error reply) is thrown as `WritesRefusedError`; READONLY stays as it is (a replica).
 */
export function createWriteProbe({ redis, keys }: { redis: Redis | Cluster; keys: RedisKeys }): () => Promise<void> {
  const processId = randomUUID();
  return async () => {
    try {
      await Promise.all(probeKeys(redis, keys, processId).map((key) => redis.set(key, '1', 'PX', PROBE_TTL_MS)));
    } catch (error) {
      if (error instanceof ReplyError && !/^READONLY\b/.test((error as Error).message)) throw new WritesRefusedError(error as Error);
      throw error;
    }
  };
}

/**
 * A standalone Redis: shard 0's key. A Cluster: one shard's key per master that holds any of the
 * shards, by the client's slot map; every shard's key while that map is not known yet.
 */
function probeKeys(redis: Redis | Cluster, keys: RedisKeys, processId: string): string[] {
  if (!redis.isCluster) return [keys.shard(0).healthProbe(processId)];
  const slots = (redis as Cluster).slots;
  const byOwner = new Map<string, string>();
  for (const shard of keys.shards()) {
    const key = shard.healthProbe(processId);
    const owner = slots[clusterSlot(tagOf(key))]?.[0] ?? key;
    if (!byOwner.has(owner)) byOwner.set(owner, key);
  }
  return [...byOwner.values()];
}

/** A key's hash tag, as Redis Cluster reads it: between the first `{` and the next `}`. */
function tagOf(key: string): string {
  const open = key.indexOf('{');
  return key.slice(open + 1, key.indexOf('}', open));
}
