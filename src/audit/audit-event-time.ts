import type { StoredAuditEvent } from './audit-event.js';

/**
 * When an event happened, for showing it. An entry without a usable `at` (added by hand, or by
 * another writer) still has its stream id, whose first part is the millisecond Redis stored it in:
 * the reader's window check falls back to that time too, so the entry is shown where it was read.
 * `fromId` says the time is the entry's, not the event's; `ms` is undefined when neither is a date.
 */
export function auditEventTime(event: StoredAuditEvent): { ms: number | undefined; fromId: boolean } {
  const at: unknown = (event as { at?: unknown }).at;
  if (isDate(at)) return { ms: at, fromId: false };
  const idMs = Number(String(event.id).split('-')[0]);
  return { ms: isDate(idMs) ? idMs : undefined, fromId: true };
}

/** A number `new Date` accepts: toISOString throws RangeError for NaN and beyond ±8.64e15. */
function isDate(value: unknown): value is number {
  return typeof value === 'number' && !Number.isNaN(new Date(value).getTime());
}
