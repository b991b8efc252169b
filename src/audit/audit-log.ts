import type { Logger } from 'pino';
import type { AuditEventInput, StoredAuditEvent } from './audit-event.js';

/**
 * The durable audit trail. Every append also goes to the structured log, so a SIEM that only
 * collects logs sees the same events.
 *
 * `append` rejects when the event could not be stored durably. Callers on a user's path (a click,
 * a tool run) must not let that undo or block what already happened: log and continue, which is
 * what `appendQuietly` does. The structured log still carries the event in that case.
 */
export interface AuditLog {
  append(event: AuditEventInput): Promise<void>;
  /** Oldest first. With `limit`, the most recent `limit` events of the window. */
  read(options: ReadAuditOptions): Promise<StoredAuditEvent[]>;
  close(): Promise<void>;
}

/**
 * The window is of the events' `at` (the bot host's clock when the event was made, which the table
 * prints), so a time copied from the table falls in it.
 */
export interface ReadAuditOptions {
  /** Epoch milliseconds, inclusive, of `at`. */
  sinceMs: number;
  /** Epoch milliseconds, inclusive, of `at`; absent means up to now. */
  untilMs?: number;
  limit?: number;
  /**
   * False leaves refused actions out and reads only the rest (requests, decisions, runs…), so a
   * reader after decisions with a `limit` gets them however many refusals came since. Default true.
   */
  refusals?: boolean;
}

/** The part of a pino logger the audit trail writes to. */
export type AuditLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/** Days an event stays readable unless configured otherwise: long enough for a quarterly review. */
export const DEFAULT_AUDIT_MAX_AGE_MS = 90 * 24 * 60 * 60 * 1000;
/** Entries kept at most per stream (Redis keeps one per key shard), whatever their age, so a runaway loop cannot fill Redis. */
export const DEFAULT_AUDIT_MAX_LENGTH = 100_000;
/**
 * Refused actions kept at most per shard, in a stream of their own. Anyone who can click a card or
 * write in a followed thread can cause a refusal, so refusals are capped apart: a flood of them
 * trims older refusals, never the requests, decisions and runs the trail exists for.
 */
export const DEFAULT_AUDIT_REFUSAL_MAX_LENGTH = 100_000;

/**
 * How far apart a bot host's clock (an event's `at`) and the Redis server's (its stream id) may be
 * for a window of `at` to be read whole: Redis reads the ids this much wider on either side, and the
 * events are then cut on `at`. An event stamped by a host whose clock was further off is missed by a
 * window that names its time to the millisecond; wider, a read only goes through more entries.
 */
export const AUDIT_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Whether an event records a refused attempt (stored and capped apart from the rest; see above). */
export function isRefusalEvent(event: { type: string }): boolean {
  return event.type === 'action-refused' || event.type === 'unauthorized-attempt';
}

/** Writes the event to the structured log: on success with its stream id, or flagged as not stored. */
export function logAuditEvent(logger: AuditLogger, audit: object, stored: boolean): void {
  logger.info({ event: 'audit', audit, ...(!stored && { stored: false }) }, 'audit');
}

/** For callers that must carry on whatever happens: a failed append is logged, never thrown. */
export async function appendQuietly(log: AuditLog, event: AuditEventInput, logger: AuditLogger): Promise<void> {
  try {
    await log.append(event);
  } catch (error) {
    logger.error({ err: error, auditType: event.type }, 'Could not store an audit event durably; the log line above still records it');
  }
}
