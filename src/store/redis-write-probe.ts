import { randomUUID } from 'node:crypto';
import { ReplyError, type Cluster, type Redis } from 'ioredis';
import { MASTER_READ_TIMEOUT_MS, NoAnswerError, within } from './cluster-master-persistence.js';
import { masterConnections, mastersNeeded } from './cluster-masters.js';
import { isRefusedUnrun } from './cluster-redirection.js';
import { createProbeKeyPerMaster, type ProbeKey } from './probe-key-per-master.js';
import type { RedisKeys } from './redis-keys.js';
import { WritesRefusedError } from './writes-refused-error.js';

/** A probe key outlives the process that wrote it by this long at most. */
const PROBE_TTL_MS = 60_000;

/**
 * Tags tried for one master in one probe when each is answered -ASK (its slot migrating): a reshard
 * moves one slot at a time, so a second tag is almost always enough.
 */
const MAX_ASKED_TAGS = 8;

/**
 * A probe of a master holding none of the bot's shards nor its markers (`mastersNeeded`) that
 * cannot be reached (its connection dropped or closed, no answer within `MASTER_READ_TIMEOUT_MS`) fails
 * nothing: with `cluster-require-full-coverage no` it can be down while every store call runs, and only
 * the untagged keys that hash to it fail (a Slack event's delivery dedupe, a schedule's claim), in every process alike, so a
 * 503 would only have every process taken out of service or restarted, for nothing. `risks()` names it
 * (`redis-master-unread`, `cluster-master-persistence.ts`). An error reply from it (OOM, NOREPLICAS,
 * MISCONF, READONLY) still fails the probe: it is up, and refuses the bot's writes there. `onNoAnswer`
 * is told when it gave no answer in time.
 */
async function unlessUnreachable(written: Promise<unknown>, onNoAnswer: () => void): Promise<unknown> {
  try {
    return await within(written, MASTER_READ_TIMEOUT_MS);
  } catch (error) {
    if (error instanceof ReplyError) throw error;
    if (error instanceof NoAnswerError) onNoAnswer();
    return undefined;
  }
}

/**
 * The write `/healthz` makes: one small SET with a short expiry (PX) per primary the bot writes to
 * (one on a standalone or Sentinel Redis, one per master of the slot map in a Cluster:
 * `probe-key-per-master.ts`), sent together. PING and ROLE are answered by a Redis that refuses every write
 * (OOM at maxmemory with noeviction, NOREPLICAS under `min-replicas-to-write`, MISCONF after a
 * failed snapshot); the SET is refused the same way the bot's own writes are. Each process writes
 * its own key (`healthProbe`), so probes of several processes never race; the keys expire by
 * themselves, and the scans that look for data skip them (`isHealthProbeKey`). In a Cluster, a master
 * the bot's calls do not need that cannot be reached fails nothing (`unlessUnreachable`).
 * A refusal (an error reply) is thrown as `WritesRefusedError`; READONLY stays as it is (a replica).
 */
export function createWriteProbe({ redis, keys }: { redis: Redis | Cluster; keys: RedisKeys }): () => Promise<void> {
  const processId = randomUUID();
  const perMaster = createProbeKeyPerMaster({ keys, processId });
  const write = (client: Redis | Cluster, key: string) => client.set(key, '1', 'PX', PROBE_TTL_MS);
  /**
   * Masters the bot's calls do not need whose probe write has had no answer since the wait gave up on it
   * (hung, or a black-holed route, its connection still open). The next checks neither write to them nor
   * wait for them, so `/healthz` does not take `MASTER_READ_TIMEOUT_MS` at every check for as long as one
   * hangs; once that write is answered or fails (the master woke, its connection closed) the next check
   * probes it again, so a refusal of its writes there shows one check later than on another master.
   */
  const unanswered = new Set<string>();
  /**
   * A Cluster's master is written on the client's own connection to it (`cluster-masters.ts`), not
   * through the Cluster client, which follows a -ASK: while the probe tag's slot is being migrated
   * (a reshard in progress, or one left unfinished until `redis-cli --cluster fix`), the key would be
   * written on the target at every probe and the master itself never probed. A -ASK (answered before
   * Redis looks at memory or replicas, so it says nothing of them) sends the probe to another tag of
   * the master's; MOVED (a slot map older than the cluster's), CLUSTERDOWN and TRYAGAIN, and a master
   * the bot's calls need that the client holds no connection to, go through the Cluster client, which
   * waits them out and reads the slot map again, as for the bot's own writes (one they do not need is not
   * reachable now: `unlessUnreachable`).
   */
  const probeCluster = async (cluster: Cluster) => {
    const connections = new Map(masterConnections(cluster).map(({ master, connection }) => [master, connection]));
    const probeMaster = async (probe: ProbeKey, asked: number): Promise<unknown> => {
      const connection = probe.master === undefined ? undefined : connections.get(probe.master);
      if (!connection) return write(cluster, probe.key);
      try {
        return await write(connection, probe.key);
      } catch (error) {
        if (!isRefusedUnrun(error)) throw error;
        if (/^ASK\b/.test(error.message) && asked < MAX_ASKED_TAGS) {
          perMaster.avoid(probe);
          const next = perMaster.keys(cluster.slots).find((other) => other.master === probe.master);
          if (next) return probeMaster(next, asked + 1);
        }
        return write(cluster, probe.key);
      }
    };
    const needed = mastersNeeded({ keys, slots: cluster.slots });
    await Promise.all(
      perMaster.keys(cluster.slots).map((probe) => {
        // A shard's key before the slot map is known (no master named), or a master the bot's calls need: any failure fails the probe.
        if (probe.master === undefined || needed.has(probe.master)) return probeMaster(probe, 0);
        // Its connection ended and the client has not read the slot map since: not reachable now. Through the
        // Cluster client, the write would only be retried against it until the redirections ran out (a second).
        if (!connections.get(probe.master) || unanswered.has(probe.master)) return undefined;
        const { master } = probe;
        const written = probeMaster(probe, 0);
        return unlessUnreachable(written, () => {
          unanswered.add(master);
          const answered = () => unanswered.delete(master);
          written.then(answered, answered);
        });
      }),
    );
  };
  return async () => {
    try {
      if (redis.isCluster) await probeCluster(redis as Cluster);
      else await write(redis, keys.shard(0).healthProbe(processId));
    } catch (error) {
      if (error instanceof ReplyError && !/^READONLY\b/.test((error as Error).message)) throw new WritesRefusedError(error as Error);
      throw error;
    }
  };
}
