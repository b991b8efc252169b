import type { AuditEventInput, StoredAuditEvent } from './audit-event.js';
import {
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_LENGTH,
  DEFAULT_AUDIT_REFUSAL_MAX_LENGTH,
  isRefusalEvent,
  logAuditEvent,
  type AuditLog,
  type AuditLogger,
} from './audit-log.js';
import { prepareAuditEvent } from './prepare-audit-event.js';

interface Entry {
  id: string;
  ms: number;
  sequence: number;
  /** The event's `at`, which a read's window is of. */
  at: number;
  json: string;
}

/**
 * Single-process twin of the Redis audit log, for development without Redis and for tests. Ids
 * follow the stream's `<ms>-<sequence>` form. Nothing survives a restart, and the CLI cannot read
 * it: without Redis the structured log is the only lasting trail. Refused actions are kept apart
 * under their own cap, as Redis keeps them, so a flood of them never trims decisions or runs.
 */
export function createMemoryAuditLog({
  logger,
  maxLength = DEFAULT_AUDIT_MAX_LENGTH,
  refusalMaxLength = DEFAULT_AUDIT_REFUSAL_MAX_LENGTH,
  maxAgeMs = DEFAULT_AUDIT_MAX_AGE_MS,
  now = Date.now,
}: {
  logger: AuditLogger;
  maxLength?: number;
  refusalMaxLength?: number;
  maxAgeMs?: number;
  now?: () => number;
}): AuditLog {
  const records: Entry[] = [];
  const refusals: Entry[] = [];
  let lastMs = 0;
  let lastSequence = -1;

  const nextId = () => {
    // Like Redis, never go backwards in time even if the clock does.
    const ms = Math.max(now(), lastMs);
    lastSequence = ms === lastMs ? lastSequence + 1 : 0;
    lastMs = ms;
    return { id: `${ms}-${lastSequence}`, ms, sequence: lastSequence };
  };
  // Stored as JSON and parsed on read, so callers get copies shaped exactly as Redis returns them.
  const toStored = ({ id, json }: Entry) => ({ id, ...(JSON.parse(json) as object) }) as StoredAuditEvent;

  return {
    async append(input: AuditEventInput) {
      const event = prepareAuditEvent(input, now);
      const { id, ms, sequence } = nextId();
      const refusal = isRefusalEvent(event);
      const entries = refusal ? refusals : records;
      entries.push({ id, ms, sequence, at: event.at, json: JSON.stringify(event) });
      // Entries are in time order, so whatever is too many sits at the front; the age cap holds for both lists.
      entries.splice(0, Math.max(0, entries.length - (refusal ? refusalMaxLength : maxLength)));
      for (const list of [records, refusals]) {
        const firstYoungEnough = list.findIndex((entry) => entry.ms >= now() - maxAgeMs);
        list.splice(0, firstYoungEnough === -1 ? list.length : firstYoungEnough);
      }
      logAuditEvent(logger, { id, ...event }, true);
    },

    async read({ sinceMs, untilMs = Number.POSITIVE_INFINITY, limit, refusals: withRefusals = true }) {
      // Of `at`, in whole milliseconds, as the Redis log reads it.
      const inWindow = (entry: Entry) => entry.at >= Math.floor(sinceMs) && entry.at <= Math.floor(untilMs);
      const window = [...records.filter(inWindow), ...(withRefusals ? refusals.filter(inWindow) : [])].sort((left, right) => left.ms - right.ms || left.sequence - right.sequence);
      if (limit !== undefined && limit < 1) return [];
      return (limit === undefined ? window : window.slice(-limit)).map(toStored);
    },

    async close() {},
  };
}
