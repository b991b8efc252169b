import type { Cluster, Redis } from 'ioredis';
import { execRouted, isAskRedirect } from './cluster-redirection.js';
import { ReplicaAnsweredError } from './replica-answered-error.js';
import type { StoreRisk } from './state-store.js';

/**
 * What the Redis primaries keep across their own restart, as they say at start-up. Read with `INFO`,
 * not `CONFIG GET`, which managed offerings (ElastiCache, Memorystore, Azure Cache) refuse.
 */
export interface RedisPersistence {
  /** `aof_enabled` on every primary; undefined when one would not say (`INFO` refused by an ACL). */
  appendOnly: boolean | undefined;
  /** Every primary answers `WAITAOF` (Redis 7.2 or later, allowed to this user). */
  waitAof: boolean;
  /**
   * `maxmemory_policy` of the primaries (`INFO memory`): the first that is not `noeviction`, else
   * `noeviction`; undefined when none would say.
   */
  evictionPolicy: string | undefined;
  /**
   * The fewest replicas a primary streams to (`connected_slaves`, `INFO replication`): a call's marker
   * waits only for replicas that are connected (`replicasRequired`), so with none it is in the
   * primary's memory alone. Undefined when a primary would not say.
   */
  replicas: number | undefined;
}

/** Several primaries' settings as one: the least a write can count on among them. */
export function combinePersistence(nodes: readonly RedisPersistence[]): RedisPersistence {
  const appendOnly = nodes.some((node) => node.appendOnly === false) ? false : nodes.every((node) => node.appendOnly === true) ? true : undefined;
  const policies = nodes.map((node) => node.evictionPolicy).filter((policy) => policy !== undefined);
  const evictionPolicy = policies.find((policy) => policy !== 'noeviction') ?? policies[0];
  const counts = nodes.map((node) => node.replicas);
  const replicas = counts.includes(0) ? 0 : counts.every((count) => count !== undefined) ? Math.min(...counts) : undefined;
  return { appendOnly, waitAof: nodes.every((node) => node.waitAof), evictionPolicy, replicas };
}

/**
 * One primary's settings, asked on `client`: a connection to it, or the Cluster client with a key of
 * the primary's (`route`, sent first as an `EXISTS` so the keyless commands go with it). A node that
 * refused the `EXISTS` unrun (-MOVED from a master demoted by a failover the client's slot map has not
 * caught up with) answered the rest too, as itself: the map is read again and the pipeline resent
 * (`execRouted`), and a refusal that stands is thrown. An -ASK is not a refusal here: only the slot's
 * primary answers so, while the slot migrates and the key (the shard's `ready` list, usually absent)
 * is not on it, so the rest is the primary's answer; throwing it failed every executing marker and
 * Deny/Revoke of every shard for as long as one shard's slot migrated. An answer from a replica
 * (`role:slave`: a connection still on a demoted node) throws `ReplicaAnsweredError`.
 */
export async function readPrimaryPersistence({ client, route }: { client: Redis | Cluster; route?: string }): Promise<RedisPersistence> {
  const build = () => {
    const pipeline = client.pipeline();
    if (route !== undefined) pipeline.exists(route);
    return pipeline.info('persistence').call('WAITAOF', '0', '0', '0').info('memory').info('replication');
  };
  const replies = (await execRouted(client, build)) ?? [];
  if (route !== undefined) {
    const [steering] = replies;
    if (!steering) throw new Error('Redis gave no reply to the EXISTS that routes INFO');
    if (steering[0] && !isAskRedirect(steering[0])) throw steering[0];
  }
  const [info, waitAof, memory, replication] = (route === undefined ? replies : replies.slice(1)).map(answered);
  const role = replication === undefined ? undefined : infoField(String(replication), 'role');
  if (role !== undefined && role !== 'master') throw new ReplicaAnsweredError(role);
  const connected = replication === undefined ? undefined : Number(infoField(String(replication), 'connected_slaves'));
  return {
    appendOnly: info === undefined ? undefined : infoField(String(info), 'aof_enabled') === '1',
    waitAof: waitAof !== undefined,
    evictionPolicy: memory === undefined ? undefined : infoField(String(memory), 'maxmemory_policy'),
    replicas: connected === undefined || !Number.isInteger(connected) ? undefined : connected,
  };
}

/**
 * A pipeline reply's value; undefined when the server refused the command (unknown on this version,
 * renamed, denied by an ACL, not for a replica). Any other error (a lost connection) is thrown.
 */
function answered(reply: [Error | null, unknown] | undefined): unknown {
  if (!reply) throw new Error('Redis gave no reply to INFO or WAITAOF');
  const [error, value] = reply;
  if (!error) return value;
  if (/^(ERR|NOPERM)\b/.test(error.message)) return undefined;
  throw error;
}

/** `name:value` lines, as `INFO` sections are written. */
export function infoField(info: string, name: string): string | undefined {
  for (const line of info.split(/\r?\n/)) {
    if (line.startsWith(`${name}:`)) return line.slice(name.length + 1).trim();
  }
  return undefined;
}

/** What an operator must be told about this Redis, at start-up and in `/healthz`: no code of the bot can prevent these; the server's settings can. */
export function persistenceRisks({ persistence, waitReplicas }: { persistence: RedisPersistence; waitReplicas: number }): StoreRisk[] {
  return [...restartRisks({ persistence, waitReplicas }), ...evictionRisks(persistence)];
}

/**
 * With neither an append-only file nor a replica that must confirm the executing marker, Redis
 * keeps only what its last snapshot had: a restart (a crash, an OOM kill, a host reboot, a deploy of
 * Redis itself) brings back a decided step without the marker of the call that already ran, and
 * the recovery sweep runs it again. COUNTERSIGN_REDIS_WAIT_REPLICAS ≥ 1 counts only while a replica
 * is connected: the marker's wait is capped at the replicas the primary streams to, so a primary
 * with none (a Cluster or Sentinel set up without replicas, a replica that went away) starts calls
 * on markers its memory alone holds. A count a primary would not say is not warned of.
 */
function restartRisks({ persistence, waitReplicas }: { persistence: RedisPersistence; waitReplicas: number }): StoreRisk[] {
  if (persistence.appendOnly === true) return [];
  if (waitReplicas > 0 && persistence.replicas !== 0) return [];
  const found = persistence.appendOnly === false ? 'Redis keeps no append-only file (INFO persistence: aof_enabled:0)' : 'Redis would not say whether it keeps an append-only file (INFO refused)';
  const unconfirmed =
    waitReplicas === 0
      ? "no replica has to confirm the bot's writes (COUNTERSIGN_REDIS_WAIT_REPLICAS=0)"
      : `no replica is connected to confirm the bot's writes (INFO replication: connected_slaves:0; COUNTERSIGN_REDIS_WAIT_REPLICAS=${waitReplicas} waits only for connected ones)`;
  const remedy = waitReplicas === 0 ? 'run a replica and set COUNTERSIGN_REDIS_WAIT_REPLICAS=1' : 'connect a replica to every primary';
  return [
    {
      code: 'redis-not-durable',
      message:
        `${found} and ${unconfirmed}: a Redis restart brings back only its last snapshot, ` +
        `so an approved call may run twice and decisions may be lost. Set \`appendonly yes\` on the Redis server, or ${remedy} (README: "Redis persistence").`,
    },
  ];
}

/**
 * Every key the bot writes has a TTL, so under `maxmemory` any `volatile-*` or `allkeys-*` policy
 * (volatile-lru is the default of ElastiCache, Memorystore and Azure Cache) may evict them. A card
 * waits for hours while nothing reads its thread: the thread's keys go first, and its decision can
 * then run nothing (`lost-thread.ts` closes it, visibly). A policy that would not say is not warned of.
 */
function evictionRisks({ evictionPolicy }: RedisPersistence): StoreRisk[] {
  if (evictionPolicy === undefined || evictionPolicy === 'noeviction') return [];
  return [
    {
      code: 'redis-evicts-keys',
      message:
        `Redis may evict the bot's keys when it reaches maxmemory (maxmemory-policy ${evictionPolicy}; every countersign key has a TTL): a waiting approval's thread can vanish, ` +
        'and its decision then runs nothing. Set maxmemory-policy noeviction on the Redis server, so a full Redis refuses writes instead of dropping state (README: "Redis persistence").',
    },
  ];
}

/**
 * A primary holding a shard would not say its settings (`readPrimaryPersistence` failed: a refusal that
 * stood, an answer as a replica, no answer). Every executing marker and withdrawal of that shard asks for
 * them first (`waitsForDisk`), so until they can be read its tool calls are not run and its Deny/Revoke are
 * refused (the other shards' are not), while the write probe may still pass: `/healthz` names it rather
 * than leave out every warning.
 */
export function primariesUnreadRisk(error: unknown): StoreRisk {
  const reason = error instanceof Error ? error.message : String(error);
  return {
    code: 'redis-primaries-unread',
    message:
      `A Redis primary holding the bot's shards did not say its settings (${reason}): until it does, every tool call of a thread in those shards is refused before it starts ` +
      'and every Deny or Revoke there is refused, since whether their writes must wait for the append-only file is not known (README: "Redis persistence").',
  };
}
