import type { AuditEventInput, StoredAuditEvent } from './audit-event.js';
import { DEFAULT_AUDIT_MAX_AGE_MS, DEFAULT_AUDIT_MAX_LENGTH, logAuditEvent, type AuditLog, type AuditLogger } from './audit-log.js';
import { prepareAuditEvent } from './prepare-audit-event.js';

interface Entry {
  id: string;
  ms: number;
  json: string;
}

/**
 * Single-process twin of the Redis audit log, for development without Redis and for tests. Ids
 * follow the stream's `<ms>-<sequence>` form. Nothing survives a restart, and the CLI cannot read
 * it: without Redis the structured log is the only lasting trail.
 */
export function createMemoryAuditLog({
  logger,
  maxLength = DEFAULT_AUDIT_MAX_LENGTH,
  maxAgeMs = DEFAULT_AUDIT_MAX_AGE_MS,
  now = Date.now,
}: {
  logger: AuditLogger;
  maxLength?: number;
  maxAgeMs?: number;
  now?: () => number;
}): AuditLog {
  const entries: Entry[] = [];
  let lastMs = 0;
  let lastSequence = -1;

  const nextId = () => {
    // Like Redis, never go backwards in time even if the clock does.
    const ms = Math.max(now(), lastMs);
    lastSequence = ms === lastMs ? lastSequence + 1 : 0;
    lastMs = ms;
    return { id: `${ms}-${lastSequence}`, ms };
  };
  // Stored as JSON and parsed on read, so callers get copies shaped exactly as Redis returns them.
  const toStored = ({ id, json }: Entry) => ({ id, ...(JSON.parse(json) as object) }) as StoredAuditEvent;

  return {
    async append(input: AuditEventInput) {
      const event = prepareAuditEvent(input, now);
      const { id, ms } = nextId();
      entries.push({ id, ms, json: JSON.stringify(event) });
      // Entries are in time order, so whatever is too old or too many sits at the front.
      const firstYoungEnough = entries.findIndex((entry) => entry.ms >= now() - maxAgeMs);
      entries.splice(0, Math.max(entries.length - maxLength, firstYoungEnough === -1 ? entries.length : firstYoungEnough));
      logAuditEvent(logger, { id, ...event }, true);
    },

    async read({ sinceMs, untilMs = Number.POSITIVE_INFINITY, limit }) {
      // Whole milliseconds, as stream ids have them.
      const window = entries.filter((entry) => entry.ms >= Math.floor(sinceMs) && entry.ms <= Math.floor(untilMs));
      if (limit !== undefined && limit < 1) return [];
      return (limit === undefined ? window : window.slice(-limit)).map(toStored);
    },

    async close() {},
  };
}
