import type { Cluster, Redis } from 'ioredis';
import { execRouted } from './cluster-redirection.js';
import { duplicateClient } from './connect-to-redis.js';

/** How long a call's start waits for its replicas by default (COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS). */
export const DEFAULT_REPLICA_WAIT_TIMEOUT_MS = 1_000;

/**
 * How many replicas must confirm a call's executing marker unless told (COUNTERSIGN_REDIS_WAIT_REPLICAS):
 * one behind Sentinel or in a Cluster, whose failovers promote a replica on their own; none for one
 * server, which may have no replica at all (a managed primary with automatic failover: set it).
 */
export function defaultReplicasToWaitFor(redis: Redis | Cluster): number {
  if (redis.isCluster) return 1;
  const { sentinels } = (redis as Redis).options;
  return Array.isArray(sentinels) && sentinels.length > 0 ? 1 : 0;
}

/** ROLE's reply from a primary → how many replicas it streams to now; undefined for anything else (a replica, a refusal). */
export function onlineReplicas(roleReply: unknown): number | undefined {
  if (!Array.isArray(roleReply) || roleReply[0] !== 'master' || !Array.isArray(roleReply[2])) return undefined;
  return roleReply[2].length;
}

/**
 * Of `wanted` replicas, how many must have confirmed: never more than the primary had streaming to it
 * when the wait ended. A replica that is not connected cannot confirm anything, and a failover to it
 * would lose more than this write; waiting for it would only refuse every call until it is back.
 */
export function replicasRequired({ wanted, online }: { wanted: number; online: number | undefined }): number {
  return Math.min(wanted, online ?? wanted);
}

/**
 * The least time a wait for the primary's append-only file is given, whatever the replicas' wait:
 * with `appendfsync everysec` Redis fsyncs once a second (later on a slow disk), so a shorter wait
 * would refuse calls on a healthy server.
 */
export const DISK_WAIT_FLOOR_MS = 2_000;

export interface ConfirmedWriteResult {
  /** The script's own reply. */
  reply: unknown;
  /** Replicas that had to confirm it, and those that did within the wait. */
  required: number;
  confirmed: number;
  /** Asked with `disk`: whether the primary had it fsynced to its append-only file within the wait (`WAITAOF`). */
  onDisk?: boolean;
  /** The WAIT or WAITAOF failed after the script ran (`confirmed` is then 0): the write stands on the primary, unconfirmed. */
  waitError?: Error;
}

export interface ReplicaConfirmedWrites {
  /**
   * Runs `script` on the primary of `shard` and waits until `required` replicas have it, and with
   * `disk` until the primary has fsynced it to its append-only file (`WAITAOF 1 0`: Redis 7.2 or
   * later, with `appendonly yes`). `keys[0]` routes the pipeline in a Cluster. Rejects when the
   * pipeline fails (the script may or may not have run) or the script failed; resolves with
   * `waitError` when only a wait did.
   */
  run(options: { shard: number; script: string; keys: readonly string[]; args: ReadonlyArray<string | number>; disk?: boolean }): Promise<ConfirmedWriteResult>;
  close(): void;
}

/**
 * Writes that a replica (or the primary's disk) must confirm before the caller acts on them. WAIT counts the replicas that
 * acknowledged the replication offset of the connection it is sent on: so the script and its WAIT
 * go out together, in one pipeline (one round trip), on one connection; everything written before
 * on other connections (a lock, a resume claim) is earlier in the one replication stream and
 * covered too. A Cluster pipeline goes whole to the node that owns its keyed command's slot, the
 * keyless WAIT and ROLE with it. WAIT blocks its connection, so the connection is a duplicate of
 * the store's, opened on the first write: clicks' commands never queue behind a wait. The script
 * goes as EVAL, not EVALSHA: an EVALSHA refused with NOSCRIPT is sent again by ioredis after the
 * WAIT, which would then not cover it. WAITAOF counts the same way, for the primary's own
 * append-only file: an OS crash with `appendfsync everysec` loses up to a second of acknowledged
 * writes, and a marker among them would let the call run again after the restart.
 */
export function createReplicaConfirmedWrites({
  redis,
  replicas,
  timeoutMs,
  onConnectionError,
}: {
  redis: Redis | Cluster;
  /** Replicas that must confirm, at most (see `replicasRequired`); 0 when only the disk is waited for. */
  replicas: number;
  /** The replicas' wait; the disk's is at least `DISK_WAIT_FLOOR_MS`. */
  timeoutMs: number;
  onConnectionError?: (error: unknown) => void;
}): ReplicaConfirmedWrites {
  let connection: Redis | Cluster | undefined;
  /** Replicas each shard's primary streamed to at its last ROLE (undefined: ROLE was refused, so wait for all `replicas`). */
  const online = new Map<number, number | undefined>();
  const open = (): Redis | Cluster => {
    if (connection) return connection;
    const opened = duplicateClient(redis);
    // ioredis reports connection errors as events; unheard, Node would end the process.
    opened.on('error', (error: unknown) => onConnectionError?.(error));
    // A new connection may reach a new primary (a failover), with other replicas.
    opened.on('ready', () => online.clear());
    connection = opened;
    return opened;
  };

  return {
    async run({ shard, script, keys, args, disk = false }) {
      const client = open();
      if (replicas > 0 && !online.has(shard)) {
        // Once per shard and connection: a primary without replicas (the one left after a failover)
        // should not cost the first call a whole wait. The key routes ROLE to the shard's node.
        const [, role] = (await execRouted(client, () => client.pipeline().exists(keys[0] as string).role())) ?? [];
        online.set(shard, role && !role[0] ? onlineReplicas(role[1]) : undefined);
      }
      const wanted = replicasRequired({ wanted: replicas, online: online.get(shard) });
      const replies = await execRouted(client, () => {
        const pipeline = client.pipeline();
        pipeline.eval(script, keys.length, ...keys, ...args);
        if (wanted > 0) pipeline.wait(wanted, timeoutMs);
        if (disk) pipeline.call('WAITAOF', '1', '0', String(Math.max(timeoutMs, DISK_WAIT_FLOOR_MS)));
        // After the waits: who the primary streams to now, for this shard's next write and to judge this one.
        if (replicas > 0) pipeline.role();
        return pipeline;
      });
      const [scripted, ...rest] = replies ?? [];
      if (!scripted) throw new Error('Redis gave no reply to a confirmed write');
      if (scripted[0]) throw scripted[0];
      const waited = wanted > 0 ? rest.shift() : undefined;
      const fsynced = disk ? rest.shift() : undefined;
      const [role] = rest;
      const now = role && !role[0] ? onlineReplicas(role[1]) : undefined;
      if (replicas > 0) online.set(shard, now);
      const waitError = waited?.[0] ?? fsynced?.[0];
      if (waitError) return { reply: scripted[1], required: wanted, confirmed: 0, waitError };
      const confirmed = waited === undefined ? 0 : Number(waited[1]);
      const onDisk = fsynced === undefined ? {} : { onDisk: Array.isArray(fsynced[1]) && Number(fsynced[1][0]) >= 1 };
      return { reply: scripted[1], required: replicasRequired({ wanted, online: now }), confirmed, ...onDisk };
    },
    close() {
      connection?.disconnect();
    },
  };
}
