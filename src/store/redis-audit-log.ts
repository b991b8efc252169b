import { CountersignError, ErrorCode } from '../errors/countersign-error.js';
import type { Cluster, Redis } from 'ioredis';
import type { RedisTarget } from '../config/redis-target.js';
import { connectRedisClient } from './connect-to-redis.js';
import { shardCountGuard } from './key-layout.js';
import { createRedisKeys, DEFAULT_REDIS_SHARDS } from './redis-keys.js';
import type { AuditEventInput, StoredAuditEvent } from '../audit/audit-event.js';
import {
  AUDIT_CLOCK_SKEW_MS,
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_LENGTH,
  DEFAULT_AUDIT_REFUSAL_MAX_LENGTH,
  isRefusalEvent,
  logAuditEvent,
  type AuditLog,
  type AuditLogger,
} from '../audit/audit-log.js';
import type { RedisFailureListener } from './redis-failures.js';
import { prepareAuditEvent } from '../audit/prepare-audit-event.js';

/** How often (at most, per process) the age cap is enforced; see `append`. */
export const DEFAULT_AUDIT_TRIM_INTERVAL_MS = 60_000;
/** Entries fetched per XRANGE when reading a whole window, so no single reply gets huge. */
const READ_PAGE_SIZE = 1_000;

export type RedisAuditLogOptions = RedisConnection & {
  /**
   * Namespace shared with the state store: per shard, `${keyPrefix}{tag}:audit` and, for refused
   * actions, `${keyPrefix}{tag}:audit-refusals` (see `redis-keys.ts`).
   */
  keyPrefix?: string;
  /** The store's shard count: the scripts append each change's events to its shard's stream. */
  shards?: number;
  maxLength?: number;
  /** The cap of each refusal stream, apart from `maxLength`. */
  refusalMaxLength?: number;
  maxAgeMs?: number;
  trimIntervalMs?: number;
  logger: AuditLogger;
  now?: () => number;
  /** Told of connection errors and failed appends (see `RedisFailureListener`). */
  onRedisError?: RedisFailureListener;
};

/** A URL or target gives the log its own connection, closed by `close`; a client stays the caller's to close. */
type RedisConnection = { url: string; redis?: never; target?: never } | { target: RedisTarget; redis?: never; url?: never } | { redis: Redis | Cluster; url?: never; target?: never };

/**
 * The audit trail as a Redis Stream: append-only, ordered by server time, and readable by range
 * without scanning. Entries are `type` (for people inspecting with redis-cli) and `event` (JSON).
 */
export function createRedisAuditLog({
  keyPrefix = 'countersign:',
  shards = DEFAULT_REDIS_SHARDS,
  maxLength = DEFAULT_AUDIT_MAX_LENGTH,
  refusalMaxLength = DEFAULT_AUDIT_REFUSAL_MAX_LENGTH,
  maxAgeMs = DEFAULT_AUDIT_MAX_AGE_MS,
  trimIntervalMs = DEFAULT_AUDIT_TRIM_INTERVAL_MS,
  logger,
  now = Date.now,
  onRedisError,
  ...connection
}: RedisAuditLogOptions): AuditLog {
  const ownsClient = connection.redis === undefined;
  const redis = connection.redis ?? connectRedisClient(connection.target ?? { kind: 'standalone', url: connection.url as string }, { commandTimeout: 5_000 });
  let closed = false;
  const reportFailure = (kind: 'connection' | 'command') => (error: unknown) => {
    if (!closed) onRedisError?.({ kind, error });
  };
  if (onRedisError) redis.on('error', reportFailure('connection'));
  const keys = createRedisKeys({ keyPrefix, shards });
  // Appends write the sharded layout as the store does, so they record (and check) its count too.
  const shardCount = shardCountGuard({ redis, keys });
  // Read newest layout first; the stream of the untagged layout is only read (and trimmed) until it ages out.
  const recordStreams = [...keys.shards().map((shard) => shard.audit()), keys.legacyAudit()];
  const streams = [...keys.shards().map((shard) => shard.refusalAudit()), ...recordStreams];
  let lastAgeTrimAt = Number.NEGATIVE_INFINITY;

  const toStored = ([id, fields]: [string, string[]]): StoredAuditEvent[] => {
    const json = fields[fields.indexOf('event') + 1];
    let parsed: unknown;
    try {
      parsed = JSON.parse(json ?? '');
    } catch {
      // One damaged entry (written by hand, say) must not hide the rest of the trail.
      logger.warn({ auditId: id }, 'Skipped an audit entry that is not valid JSON');
      return [];
    }
    // Valid JSON but no event (`42`, `"text"`, `[...]`, `null`): spread into one, it would be an
    // event of numbered fields or of none.
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      logger.warn({ auditId: id }, 'Skipped an audit entry that is not a JSON object');
      return [];
    }
    return [{ id, ...parsed } as StoredAuditEvent];
  };

  const readWhole = async (stream: string, start: string, end: string): Promise<Array<[string, string[]]>> => {
    const entries: Array<[string, string[]]> = [];
    let from = start;
    for (;;) {
      const page = await redis.xrange(stream, from, end, 'COUNT', READ_PAGE_SIZE);
      entries.push(...page);
      const last = page.at(-1);
      if (page.length < READ_PAGE_SIZE || last === undefined) return entries;
      from = `(${last[0]}`;
    }
  };

  /** The newest `limit` events of the window in `stream`, newest first: entries of the margin outside it are read past. */
  const readNewest = async (stream: string, start: string, end: string, { limit, inWindow }: { limit: number; inWindow: (event: StoredAuditEvent) => boolean }) => {
    const found: StoredAuditEvent[] = [];
    let to = end;
    for (;;) {
      const page = await redis.xrevrange(stream, to, start, 'COUNT', limit);
      found.push(...page.flatMap(toStored).filter(inWindow));
      const last = page.at(-1);
      if (found.length >= limit || page.length < limit || last === undefined) return found.slice(0, limit);
      to = `(${last[0]}`;
    }
  };

  return {
    async append(input: AuditEventInput) {
      const event = prepareAuditEvent(input, now);
      // Redis accepts one trim strategy per XADD (and per XTRIM). The length cap rides on every XADD
      // with `~`, which only drops whole internal nodes and so costs next to nothing. The age cap is
      // a separate exact XTRIM MINID, sent at most once per interval: retention is a promise to
      // auditors ("nothing older than N days"), and per-append it would be wasted work.
      const trimAge = now() - lastAgeTrimAt >= trimIntervalMs;
      if (trimAge) lastAgeTrimAt = now();
      // Events written outside a state change go to their channel's shard; events of no channel to
      // the first shard. Refused actions go to the shard's refusal stream: anyone who can click a
      // card can cause them, so under their own cap a flood of them trims only refusals, never the
      // decisions and runs next to them. The length caps hold per stream.
      const routed = event as { teamId?: unknown; channel?: unknown };
      const shard = typeof routed.teamId === 'string' && typeof routed.channel === 'string' ? keys.ofChannel(routed.teamId, routed.channel) : keys.shard(0);
      const refusal = isRefusalEvent(event);
      const key = refusal ? shard.refusalAudit() : shard.audit();
      let id: string;
      try {
        await shardCount();
        id = String(await redis.xadd(key, 'MAXLEN', '~', refusal ? refusalMaxLength : maxLength, '*', 'type', event.type, 'event', JSON.stringify(event)));
      } catch (error) {
        reportFailure('command')(error);
        logAuditEvent(logger, event, false);
        throw new AuditAppendError({ eventType: event.type, cause: error });
      }
      if (trimAge) {
        const minimumId = Math.max(0, now() - maxAgeMs);
        const trims = await Promise.allSettled(streams.map((stream) => redis.xtrim(stream, 'MINID', '=', minimumId)));
        const failed = trims.find((trim) => trim.status === 'rejected');
        if (failed) logger.warn({ err: failed.reason }, 'Could not trim old audit entries; will try again later');
      }
      logAuditEvent(logger, { id, ...event }, true);
    },

    async read({ sinceMs, untilMs, limit, refusals = true }) {
      // The untagged layout's stream holds refusals too; it is read either way until it ages out.
      const read = refusals ? streams : recordStreams;
      // The window is of `at` (the bot host's clock); ids carry the Redis server's. The ids are read a
      // skew margin wider, and the events cut on `at`, in whole milliseconds as ids have them.
      const from = Math.floor(sinceMs);
      const to = untilMs === undefined ? Number.POSITIVE_INFINITY : Math.floor(untilMs);
      const start = `${Math.max(0, from - AUDIT_CLOCK_SKEW_MS)}-0`;
      // A bare millisecond as the end of a range means "any sequence number in that millisecond".
      const end = untilMs === undefined ? '+' : String(to + AUDIT_CLOCK_SKEW_MS);
      const inWindow = (event: StoredAuditEvent) => {
        const at = typeof event.at === 'number' ? event.at : Number(event.id.split('-')[0]);
        return at >= from && at <= to;
      };
      if (limit !== undefined) {
        if (limit < 1) return [];
        const newest = await Promise.all(read.map((stream) => readNewest(stream, start, end, { limit, inWindow })));
        return newest.flat().sort(byStreamId).slice(-limit);
      }
      const all = await Promise.all(read.map((stream) => readWhole(stream, start, end)));
      return all.flat().flatMap(toStored).filter(inWindow).sort(byStreamId);
    },

    async close() {
      closed = true;
      if (!ownsClient) return;
      // QUIT lets appends already sent finish; when Redis is gone it cannot, so just drop the socket.
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Stream ids (`ms-seq`) in time order, across the shards' streams (decisions and refusals alike).
 * Each stream numbers its own entries, so two streams' entries of one millisecond keep the order of
 * `streams` instead of the order they were written in.
 */
function byStreamId({ id: left }: StoredAuditEvent, { id: right }: StoredAuditEvent): number {
  const [leftMs = 0, leftSeq = 0] = left.split('-').map(Number);
  const [rightMs = 0, rightSeq = 0] = right.split('-').map(Number);
  return leftMs - rightMs || leftSeq - rightSeq;
}

/** The audit event could not be written; callers that must not act unaudited stop here. */
export class AuditAppendError extends CountersignError {
  override readonly name = 'AuditAppendError';
  readonly code = ErrorCode.AuditAppendFailed;
  readonly eventType: string;

  constructor({ eventType, cause }: { eventType: string; cause: unknown }) {
    super('Could not append the audit event to Redis', { cause });
    this.eventType = eventType;
  }
}
