import type { Cluster, Redis } from 'ioredis';

/**
 * Throws when the Redis the bot is connected to answers but takes no writes: a primary demoted to a
 * replica by a failover behind a plain `redis://` URL (the connection stays on the old node, whose every
 * write fails READONLY), or a replica named by mistake. `ROLE` reads one small reply and writes nothing.
 * The error starts with `READONLY`, as the bot's own writes fail there, so it counts as the store being
 * unavailable (`isStoreUnavailable`). A Cluster is not asked: its client sends each write to the node
 * that owns the key's slot, following the cluster's redirects after a failover. A server that refuses
 * `ROLE` (renamed, or denied by an ACL) cannot tell, and is taken to take writes.
 */
export async function assertTakesWrites(redis: Redis | Cluster): Promise<void> {
  if (redis.isCluster) return;
  let role: unknown;
  try {
    [role] = await (redis as Redis).role();
  } catch (error) {
    if (isRefusedCommand(error)) return;
    throw error;
  }
  if (role !== 'master') throw new Error(`READONLY the Redis server is a ${String(role)} (ROLE), not a primary: it takes no writes`);
}

/** `ERR unknown command 'ROLE'`, `NOPERM … has no permissions to run the 'role' command`. */
function isRefusedCommand(error: unknown): boolean {
  return error instanceof Error && /^(ERR unknown command|NOPERM)\b/i.test(error.message);
}
