import { CountersignError, ErrorCode } from '../errors/countersign-error.js';
import { Redis } from 'ioredis';
import { reconnectDelayMs } from './reconnect-delay.js';
import type { AuditEventInput, StoredAuditEvent } from '../audit/audit-event.js';
import {
  auditStreamKey,
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_LENGTH,
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
  /** Namespace shared with the state store; the stream is `${keyPrefix}audit`. */
  keyPrefix?: string;
  maxLength?: number;
  maxAgeMs?: number;
  trimIntervalMs?: number;
  logger: AuditLogger;
  now?: () => number;
  /** Told of connection errors and failed appends (see `RedisFailureListener`). */
  onRedisError?: RedisFailureListener;
};

/** A URL gives the log its own connection, closed by `close`; a client stays the caller's to close. */
type RedisConnection = { url: string; redis?: never } | { redis: Redis; url?: never };

/**
 * The audit trail as a Redis Stream: append-only, ordered by server time, and readable by range
 * without scanning. Entries are `type` (for people inspecting with redis-cli) and `event` (JSON).
 */
export function createRedisAuditLog({
  keyPrefix = 'countersign:',
  maxLength = DEFAULT_AUDIT_MAX_LENGTH,
  maxAgeMs = DEFAULT_AUDIT_MAX_AGE_MS,
  trimIntervalMs = DEFAULT_AUDIT_TRIM_INTERVAL_MS,
  logger,
  now = Date.now,
  onRedisError,
  ...connection
}: RedisAuditLogOptions): AuditLog {
  const ownsClient = connection.redis === undefined;
  const redis = connection.redis ?? connectForAppends(connection.url);
  let closed = false;
  const reportFailure = (kind: 'connection' | 'command') => (error: unknown) => {
    if (!closed) onRedisError?.({ kind, error });
  };
  if (onRedisError) redis.on('error', reportFailure('connection'));
  const key = auditStreamKey(keyPrefix);
  let lastAgeTrimAt = Number.NEGATIVE_INFINITY;

  const toStored = ([id, fields]: [string, string[]]): StoredAuditEvent[] => {
    const json = fields[fields.indexOf('event') + 1];
    try {
      return [{ id, ...(JSON.parse(json ?? '') as object) } as StoredAuditEvent];
    } catch {
      // One damaged entry (written by hand, say) must not hide the rest of the trail.
      logger.warn({ auditId: id }, 'Skipped an audit entry that is not valid JSON');
      return [];
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
      let id: string;
      try {
        const pipeline = redis.pipeline().xadd(key, 'MAXLEN', '~', maxLength, '*', 'type', event.type, 'event', JSON.stringify(event));
        if (trimAge) pipeline.xtrim(key, 'MINID', '=', Math.max(0, now() - maxAgeMs));
        const results = (await pipeline.exec()) ?? [];
        const [addError, addedId] = results[0] ?? [new Error('Redis returned no reply to XADD')];
        if (addError) throw addError;
        const trimError = results[1]?.[0];
        if (trimError) logger.warn({ err: trimError }, 'Could not trim old audit entries; will try again later');
        id = String(addedId);
      } catch (error) {
        reportFailure('command')(error);
        logAuditEvent(logger, event, false);
        throw new AuditAppendError({ eventType: event.type, cause: error });
      }
      logAuditEvent(logger, { id, ...event }, true);
    },

    async read({ sinceMs, untilMs, limit }) {
      const start = `${Math.max(0, Math.floor(sinceMs))}-0`;
      // A bare millisecond as the end of a range means "any sequence number in that millisecond".
      const end = untilMs === undefined ? '+' : String(Math.floor(untilMs));
      if (limit !== undefined) {
        if (limit < 1) return [];
        const newestFirst = await redis.xrevrange(key, end, start, 'COUNT', limit);
        return newestFirst.reverse().flatMap(toStored);
      }
      const events: StoredAuditEvent[] = [];
      let from = start;
      for (;;) {
        const page = await redis.xrange(key, from, end, 'COUNT', READ_PAGE_SIZE);
        events.push(...page.flatMap(toStored));
        const last = page.at(-1);
        if (page.length < READ_PAGE_SIZE || last === undefined) return events;
        from = `(${last[0]}`;
      }
    },

    async close() {
      closed = true;
      if (!ownsClient) return;
      // QUIT lets appends already sent finish; when Redis is gone it cannot, so just drop the socket.
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

function connectForAppends(url: string): Redis {
  const redis = new Redis(url, {
    // Like the state store: fail an append promptly rather than queue it forever behind a dead link.
    maxRetriesPerRequest: 2,
    retryStrategy: reconnectDelayMs,
    connectTimeout: 5_000,
    // A Redis that accepts connections but never answers must not hold a caller's await forever.
    commandTimeout: 5_000,
  });
  // ioredis emits connection errors as events; without a listener Node would crash the process.
  redis.on('error', () => {});
  return redis;
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
