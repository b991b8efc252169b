import { randomUUID } from 'node:crypto';

/**
 * Every Redis key the bot writes, in one place. In Redis Cluster a Lua script may only touch keys
 * of one hash slot, and the scripts commit a thread's state together with the schedules the
 * sweepers read (expiries, reminders, completed steps, threads with work, ready hints) and the
 * audit stream. So the keyspace is cut into `shards` slot groups: a channel's threads, steps,
 * grants and pending index all live in the shard its `team:channel` hashes to, next to that
 * shard's schedules and audit stream, under the shard's hash tag (`{…}`). Every script stays one
 * atomic write, no schedule is a single hot key, and the sweepers read each shard in turn.
 *
 * A new key goes here: per thread, step or channel → `shard.…` of its owner; global → one key per
 * shard (and the readers cover `shards()`); a key no script touches with others may stay untagged.
 *
 * Changing the number of shards moves every key: it needs an empty (drained) keyspace.
 */
export const DEFAULT_REDIS_SHARDS = 16;
export const MAX_REDIS_SHARDS = 1_024;

/** Redis Cluster's slot count; a hash tag's slot is CRC16(tag) mod this. */
const CLUSTER_SLOTS = 16_384;

/** The sorted sets of due times (epoch ms → step ids), one per kind and shard. */
export type ScheduleKind = 'expiry' | 'reminder' | 'escalation';
const SCHEDULE_NAMES: Record<ScheduleKind, string> = { expiry: 'expiries', reminder: 'reminders', escalation: 'escalations' };

export interface ShardKeys {
  readonly index: number;
  thread(threadKey: string): string;
  messages(threadKey: string): string;
  queue(threadKey: string): string;
  lock(threadKey: string): string;
  fence(threadKey: string): string;
  inflight(threadKey: string): string;
  /** What one step commit or write that may take a thread's lock did, for a resend of it (see COMMIT_STEP_SCRIPT); in its step's or thread's shard. */
  attempt(token: string): string;
  executing(threadKey: string): string;
  step(stepId: string): string;
  pending(teamId: string, channel: string): string;
  grants(teamId: string, channel: string): string;
  /** Threads with queued or in-flight work (sorted set, score = first enqueue). */
  busy(): string;
  /** Thread keys handed off to the workers (list). */
  ready(): string;
  /** Steps decided but not resumed (sorted set, score = completion time). */
  complete(): string;
  schedule(kind: ScheduleKind): string;
  /** Who is sending a step's due reminder, and until when (a hash with a TTL; see CLAIM_REMINDER_SCRIPT). */
  reminderClaim(stepId: string): string;
  /** Messages of this shard's threads still to be taken back (sorted set, score = next try; see `TakeBackStore`). */
  takeBacks(): string;
  /** Steps of this shard whose thread card is to be drawn again (sorted set, score = next try; see `CardRefreshStore`). */
  cardRefreshes(): string;
  audit(): string;
  /** Refused actions of this shard's channels: a stream apart from `audit`, with its own cap, so refusals never trim decisions. */
  refusalAudit(): string;
  /** A workspace's open steps in this shard (sorted set, score = creation time): App Home and the pending gauge. */
  openSteps(teamId: string): string;
  /** Workspaces with open steps in this shard (set). */
  openStepTeams(): string;
  /** A workspace's channels with grants in this shard (set): the viewer's grants across channels. */
  grantChannels(teamId: string): string;
  /**
   * What `/healthz` writes (SET with a short expiry) to prove this shard's Redis takes writes: one per
   * process, never data (`isHealthProbeKey`: scans for data look past it).
   */
  healthProbe(processId: string): string;
}

export interface RedisKeys {
  readonly shardCount: number;
  /** The shard of a thread: its channel's. */
  ofThread(threadKey: string): ShardKeys;
  /** The shard of a step: the one its id names (see `newStepId`), else a hash of the id. */
  ofStep(stepId: string): ShardKeys;
  ofChannel(teamId: string, channel: string): ShardKeys;
  shard(index: number): ShardKeys;
  shards(): readonly ShardKeys[];
  /** Delivery dedupe: a single-key SET NX each, so left untagged (spread over the whole cluster). */
  once(id: string): string;
  /** Set once legacy (untagged) keys were moved to this layout; see `migrate-legacy-keys.ts`. */
  layoutMarker(): string;
  /** The shard count the data was written with; see `key-layout.ts`. */
  shardCountMarker(): string;
  /** The audit stream of the untagged layout; still read (and age-trimmed), never written. */
  legacyAudit(): string;
  /**
   * A `healthProbe` key under any hash tag: in a Cluster, `/healthz` writes one to every master (the
   * untagged keys, `once:` and the markers, may live on a master that holds no shard).
   */
  healthProbe(tag: string, processId: string): string;
}

export function createRedisKeys({ keyPrefix, shards = DEFAULT_REDIS_SHARDS }: { keyPrefix: string; shards?: number }): RedisKeys {
  if (/[{}]/.test(keyPrefix)) throw new RangeError('Redis key prefix must not contain { or }: they would change the hash tag');
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_REDIS_SHARDS) throw new RangeError(`Redis shards must be a whole number from 1 to ${MAX_REDIS_SHARDS}, got ${shards}`);
  const all = Array.from({ length: shards }, (_unused, index) => shardKeys(keyPrefix, index, balancedTag(index, shards)));
  const byRouting = (routing: number) => all[routing % shards] as ShardKeys;
  return {
    shardCount: shards,
    ofThread: (threadKey) => byRouting(routingHash(channelOfThread(threadKey))),
    ofStep: (stepId) => byRouting(stepRouting(stepId)),
    ofChannel: (teamId, channel) => byRouting(routingHash(`${teamId}:${channel}`)),
    shard: (index) => all[index] as ShardKeys,
    shards: () => all,
    once: (id) => `${keyPrefix}once:${id}`,
    layoutMarker: () => `${keyPrefix}layout`,
    shardCountMarker: () => `${keyPrefix}shards`,
    legacyAudit: () => `${keyPrefix}audit`,
    healthProbe: (tag, processId) => `${keyPrefix}{${tag}}:${HEALTH_PROBE}${processId}`,
  };
}

function shardKeys(keyPrefix: string, index: number, tag: string): ShardKeys {
  const at = `${keyPrefix}{${tag}}:`;
  return {
    index,
    thread: (threadKey) => `${at}thread:${threadKey}`,
    messages: (threadKey) => `${at}thread-messages:${threadKey}`,
    queue: (threadKey) => `${at}queue:${threadKey}`,
    lock: (threadKey) => `${at}lock:${threadKey}`,
    fence: (threadKey) => `${at}fence:${threadKey}`,
    inflight: (threadKey) => `${at}inflight:${threadKey}`,
    attempt: (token) => `${at}attempt:${token}`,
    executing: (threadKey) => `${at}executing:${threadKey}`,
    step: (stepId) => `${at}step:${stepId}`,
    pending: (teamId, channel) => `${at}pending:${teamId}:${channel}`,
    grants: (teamId, channel) => `${at}grants:${teamId}:${channel}`,
    busy: () => `${at}busy-threads`,
    ready: () => `${at}ready-threads`,
    complete: () => `${at}complete-steps`,
    schedule: (kind) => `${at}${SCHEDULE_NAMES[kind]}`,
    reminderClaim: (stepId) => `${at}reminder-claim:${stepId}`,
    takeBacks: () => `${at}take-backs`,
    cardRefreshes: () => `${at}card-refreshes`,
    audit: () => `${at}audit`,
    refusalAudit: () => `${at}audit-refusals`,
    openSteps: (teamId) => `${at}open-steps:${teamId}`,
    openStepTeams: () => `${at}open-step-teams`,
    grantChannels: (teamId) => `${at}grant-channels:${teamId}`,
    healthProbe: (processId) => `${at}${HEALTH_PROBE}${processId}`,
  };
}

const HEALTH_PROBE = 'health-probe:';

/**
 * Whether `name` is a shard's `healthProbe` key under `keyPrefix`: written by every health check,
 * even before the bot has written anything else, so it says nothing about whether data is there.
 */
export function isHealthProbeKey(keyPrefix: string, name: string): boolean {
  if (!name.startsWith(keyPrefix)) return false;
  const rest = name.slice(keyPrefix.length);
  const tagEnd = rest.indexOf('}:');
  return rest.startsWith('{') && tagEnd > 0 && rest.startsWith(HEALTH_PROBE, tagEnd + 2);
}

/** `team:channel:threadTs` → `team:channel`: a channel's threads share the shard of its grants and pending index. */
export function channelOfThread(threadKey: string): string {
  const cut = threadKey.lastIndexOf(':');
  return cut > 0 ? threadKey.slice(0, cut) : threadKey;
}

/** A step id that names its thread's shard: 8 hex digits of the channel's routing hash, then a random UUID. */
export function newStepId(threadKey: string): string {
  return `${stepIdPrefix(threadKey)}${randomUUID().replaceAll('-', '')}`;
}

/** The 8 hex digits every step id `newStepId` gives for this thread starts with. */
export function stepIdPrefix(threadKey: string): string {
  return routingHash(channelOfThread(threadKey)).toString(16).padStart(8, '0');
}

const ROUTED_STEP_ID = /^[0-9a-f]{40}$/;

function stepRouting(stepId: string): number {
  // Ids from before (32-hex UUIDs) or chosen by tests fall back to a hash of the id: still one
  // slot per step; a script touching such a step and its thread needs a standalone Redis.
  return ROUTED_STEP_ID.test(stepId) ? Number.parseInt(stepId.slice(0, 8), 16) : routingHash(stepId);
}

/** FNV-1a, 32 bits: stable across versions and processes (it decides where data lives). */
function routingHash(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * The tag of shard `index`: the first `s<index>.<n>` whose slot falls in the index-th of `shards`
 * equal slot ranges. `redis-cli --cluster create` gives each master a contiguous range, so shards
 * spread evenly over the masters instead of wherever CRC16 happens to put `0`, `1`, `2`…
 */
function balancedTag(index: number, shards: number): string {
  const low = Math.floor((index * CLUSTER_SLOTS) / shards);
  const high = Math.floor(((index + 1) * CLUSTER_SLOTS) / shards);
  for (let attempt = 0; ; attempt += 1) {
    const tag = `s${index}.${attempt}`;
    const slot = clusterSlot(tag);
    if (slot >= low && slot < high) return tag;
  }
}

/** Redis Cluster's slot of a key: its hash tag's (the text between the first `{` and the next `}`, if not empty), else the whole key's. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return clusterSlot(close > open + 1 ? key.slice(open + 1, close) : key);
}

/** Redis Cluster's key slot of a hash tag: CRC16-XMODEM mod 16384. */
export function clusterSlot(tag: string): number {
  let crc = 0;
  for (const byte of new TextEncoder().encode(tag)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % CLUSTER_SLOTS;
}
