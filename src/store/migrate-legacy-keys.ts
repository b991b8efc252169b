import type { Cluster, Redis } from 'ioredis';
import type { RedisKeys, ShardKeys } from './redis-keys.js';

/** The key layout this version writes; see `redis-keys.ts`. */
const LAYOUT_VERSION = '2';
const SCAN_BATCH = 5_000;

type PerThread = 'thread' | 'messages' | 'queue' | 'lock' | 'fence' | 'inflight' | 'executing';
const PER_THREAD: Record<string, PerThread> = {
  'thread:': 'thread',
  'thread-messages:': 'messages',
  'queue:': 'queue',
  'lock:': 'lock',
  'fence:': 'fence',
  'inflight:': 'inflight',
  'executing:': 'executing',
};
/** Global indexes of the untagged layout and where each member goes now. */
const INDEXES: Record<string, { type: 'zset' | 'list'; owner: 'thread' | 'step'; key: (shard: ShardKeys) => string }> = {
  'busy-threads': { type: 'zset', owner: 'thread', key: (shard) => shard.busy() },
  'ready-threads': { type: 'list', owner: 'thread', key: (shard) => shard.ready() },
  'complete-steps': { type: 'zset', owner: 'step', key: (shard) => shard.complete() },
  expiries: { type: 'zset', owner: 'step', key: (shard) => shard.schedule('expiry') },
  reminders: { type: 'zset', owner: 'step', key: (shard) => shard.schedule('reminder') },
};

/**
 * Moves the keys of the untagged layout (before Cluster support) to their sharded names, once
 * (`key-layout.ts` runs it before the store's first command):
 * an upgrade in place keeps its pending cards, queued work, fencing tokens and grants. Keys are
 * renamed (RENAMENX keeps their TTL and never overwrites a newer key); the global schedules are
 * split into their shards. The old audit stream stays where it is and is still read. Runs in each
 * process until the layout marker is set, so every process of the old version must be stopped
 * first: one still running would write keys no one reads.
 * A Cluster never held the old layout (its scripts were refused there), so it is skipped.
 */
export async function migrateLegacyKeys({ redis, keys, keyPrefix }: { redis: Redis | Cluster; keys: RedisKeys; keyPrefix: string }): Promise<void> {
  if (redis.isCluster) return;
  await migrate(redis as Redis, keys, keyPrefix);
}

async function migrate(redis: Redis, keys: RedisKeys, keyPrefix: string): Promise<void> {
  if ((await redis.get(keys.layoutMarker())) === LAYOUT_VERSION) return;
  const pattern = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  let stuck = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH);
    cursor = next;
    for (const name of found) {
      try {
        await migrateKey(redis, keys, name.slice(keyPrefix.length), name);
      } catch {
        // One odd key (a type written by hand, say) must not keep the store from starting; the
        // marker stays unset, so the next start tries it again.
        stuck += 1;
      }
    }
  } while (cursor !== '0');
  if (stuck === 0) await redis.set(keys.layoutMarker(), LAYOUT_VERSION);
}

async function migrateKey(redis: Redis, keys: RedisKeys, rest: string, name: string): Promise<void> {
  if (rest.includes('{')) return; // already the sharded layout
  const index = INDEXES[rest];
  if (index !== undefined) return splitIndex(redis, keys, name, index);
  const target = newName(keys, rest);
  if (target !== undefined) await redis.renamenx(name, target);
}

function newName(keys: RedisKeys, rest: string): string | undefined {
  for (const [prefix, kind] of Object.entries(PER_THREAD)) {
    if (rest.startsWith(prefix)) {
      const threadKey = rest.slice(prefix.length);
      return keys.ofThread(threadKey)[kind](threadKey);
    }
  }
  if (rest.startsWith('step:')) {
    const stepId = rest.slice('step:'.length);
    return keys.ofStep(stepId).step(stepId);
  }
  for (const kind of ['pending', 'grants'] as const) {
    if (!rest.startsWith(`${kind}:`)) continue;
    const channelKey = rest.slice(kind.length + 1);
    const cut = channelKey.indexOf(':');
    if (cut === -1) return undefined;
    const [teamId, channel] = [channelKey.slice(0, cut), channelKey.slice(cut + 1)];
    return keys.ofChannel(teamId, channel)[kind](teamId, channel);
  }
  return undefined; // `once:` (same name now), `audit` (read in place), anything unknown
}

async function splitIndex(redis: Redis, keys: RedisKeys, name: string, index: (typeof INDEXES)[string]): Promise<void> {
  const shardOf = (member: string) => (index.owner === 'thread' ? keys.ofThread(member) : keys.ofStep(member));
  const pipeline = redis.pipeline();
  if (index.type === 'list') {
    for (const member of await redis.lrange(name, 0, -1)) pipeline.rpush(index.key(shardOf(member)), member);
  } else {
    const flat = await redis.zrange(name, '0', '-1', 'WITHSCORES');
    for (let at = 0; at + 1 < flat.length; at += 2) {
      const member = flat[at] as string;
      // NX: a member the new layout already scheduled keeps its newer score.
      pipeline.zadd(index.key(shardOf(member)), 'NX', flat[at + 1] as string, member);
    }
  }
  pipeline.del(name);
  for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
}
