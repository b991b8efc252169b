import type { Cluster, Redis } from 'ioredis';
import { masterConnections } from './cluster-masters.js';
import { refreshSlotMap } from './cluster-redirection.js';
import { readPrimaryPersistence, type RedisPersistence } from './redis-persistence.js';
import type { RedisKeys } from './redis-keys.js';
import { ReplicaAnsweredError } from './replica-answered-error.js';
import type { StoreRisk } from './state-store.js';

/**
 * How long a master is waited for: under `/healthz`'s own limit (`HEALTH_CHECK_TIMEOUT_MS`, 2.5 s), so
 * a master that accepts the connection and never answers leaves out its own settings, not every warning.
 */
export const MASTER_READ_TIMEOUT_MS = 2_000;

/** What the masters of a Cluster's slot map said: each one's settings, and the masters that did not answer. */
export interface MasterPersistence {
  read: RedisPersistence[];
  /** `timedOut`: it took the question and gave no answer within the wait (hung), rather than failing at once. */
  unread: Array<{ master: string; reason: string; timedOut?: true }>;
}

/**
 * For the warnings only (`/healthz`, the start-up log): every master of a Cluster's slot map, each on
 * the client's own connection to it (`cluster-masters.ts`: the masters `/healthz` probes), since the
 * bot's untagged keys (`once:`, a schedule's claim, the layout markers) can live on a master holding no
 * shard, and its eviction or missing append-only file loses them. Never what decides the shards' waits
 * (each shard's own primary, read per shard in `redis-durable-writes.ts`): with `cluster-require-full-coverage no` such a master can be down while
 * every shard takes writes, and a master holding none of them must not turn off their `WAITAOF`. So a
 * master without a connection, or not answering within `timeoutMs`, is named in `unread` and fails
 * nothing. A master of the slot map that answers as a replica (a failover the client has not heard of:
 * a graceful `CLUSTER FAILOVER` demotes it without closing its connections) is not taken for the shards'
 * master: the slot map is read again and its masters asked again, once; one that still answers so is
 * named in `unread`. Before the client has its slot map, one routed command waits for it; none at all
 * (one server, or a slot map still unknown): no masters, the shards' read covers what the bot writes.
 */
export async function readMasterPersistence({ redis, keys, timeoutMs = MASTER_READ_TIMEOUT_MS }: { redis: Redis | Cluster; keys: RedisKeys; timeoutMs?: number }): Promise<MasterPersistence> {
  if (!redis.isCluster) return { read: [], unread: [] };
  const cluster = redis as Cluster;
  // Start-up: the client loads its slot map on connecting, and a routed command waits for that.
  if (masterConnections(cluster).length === 0) await cluster.exists(keys.shard(0).ready());
  // A master whose connection ended is dropped from the client's pool and added again only when the slot map is
  // next read, which an idle bot never does: read it now, so a master that came back is asked again. Only then:
  // with every master connected (the usual check) this costs nothing. A refresh that fails leaves the map as it was.
  if (masterConnections(cluster).some(({ connection }) => !connection)) await refreshSlotMap(cluster).catch(() => {});
  type Answer = { master: string; persistence: RedisPersistence } | { master: string; reason: string; timedOut?: true; demoted?: true };
  const askMasters = () =>
    Promise.all(
      masterConnections(cluster).map(async ({ master, connection }): Promise<Answer> => {
        // The client dropped it (its connection ended) and has not read the slot map since: not reachable now.
        if (!connection) return { master, reason: 'not connected' };
        try {
          return { master, persistence: await within(readPrimaryPersistence({ client: connection }), timeoutMs) };
        } catch (error) {
          return {
            master,
            reason: error instanceof Error ? error.message : String(error),
            ...(error instanceof NoAnswerError && { timedOut: true as const }),
            ...(error instanceof ReplicaAnsweredError && { demoted: true as const }),
          };
        }
      }),
    );
  let answers = await askMasters();
  if (answers.some((answer) => 'demoted' in answer)) {
    // A refresh that fails leaves the map as it was: the demoted master is then named unread.
    await refreshSlotMap(cluster).catch(() => {});
    answers = await askMasters();
  }
  const found: MasterPersistence = { read: [], unread: [] };
  for (const answer of answers) {
    if ('persistence' in answer) found.read.push(answer.persistence);
    else found.unread.push({ master: answer.master, reason: answer.reason, ...(answer.timedOut && { timedOut: true as const }) });
  }
  return found;
}

/**
 * Whether a read of the masters is worth keeping for `/healthz`'s next minute: not when a master failed
 * at once (no connection, connection refused or closed), so the next check asks again and a master that
 * came back is no longer named (a master that is down costs each check a read of the slot map and of the
 * other masters meanwhile). One that took the question and never answered is kept: asking it again would
 * cost every check the whole wait (`MASTER_READ_TIMEOUT_MS`).
 */
export function keepMasterPersistence({ unread }: MasterPersistence): boolean {
  return unread.every((master) => master.timedOut === true);
}

/** A master whose settings are not known: its keys may be evicted or lost in a restart, and nothing says so. */
export function unreadMasterRisks({ unread }: MasterPersistence): StoreRisk[] {
  return unread.map(({ master, reason }) => ({
    code: 'redis-master-unread',
    message:
      `Redis Cluster master ${master} did not answer INFO (${reason}): whether it keeps an append-only file and evicts keys is not known, ` +
      "and the bot's untagged keys (a Slack event's delivery dedupe, a schedule's claim) can live there. The shards' writes are not affected (README: \"Redis persistence\").",
  }));
}

/** `within`'s rejection: no answer in time. */
export class NoAnswerError extends Error {}

/** `work`, or a rejection (`NoAnswerError`) once `timeoutMs` passed without its answer (left to settle on its own). */
export async function within<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerError(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
