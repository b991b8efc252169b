import { describe, expect, it } from 'vitest';
import { createMemoryAuditLog } from './memory-audit-log.js';
import { formatAuditTable } from './format-audit-table.js';
import { parseAuditArguments, type AuditQuery } from './parse-audit-arguments.js';
import { parseTimePoint } from './parse-time-point.js';

const silent = { info: () => {}, warn: () => {}, error: () => {} };
const NOW = Date.parse('2024-05-02T00:00:00Z');

/**
 * The table prints times cut to the second ("2024-05-01 12:00:03"). Read as 12:00:03.000, an
 * `--until` copied from it would end the window before the very row whose time was copied (at
 * 12:00:03.480): "what happened up to the approval at 12:00:03" would miss that approval.
 */
describe('--until with a time copied from the table', () => {
  it('includes the row whose printed time was copied', async () => {
    let clock = Date.parse('2024-05-01T12:00:03.480Z');
    const log = createMemoryAuditLog({ logger: silent, now: () => clock });
    await log.append({ type: 'expired', stepId: 's1', approvalId: 'a1', toolName: 'restart_service' });
    clock = NOW;
    const table = formatAuditTable(await log.read({ sinceMs: 0 }), { now: NOW });
    expect(table).toContain('2024-05-01 12:00:03');

    const query = parseAuditArguments(['--since', '2024-05-01', '--until', '2024-05-01 12:00:03'], { now: NOW }) as AuditQuery;
    const events = await log.read({ sinceMs: query.sinceMs, ...(query.untilMs !== undefined && { untilMs: query.untilMs }) });
    expect(events.map((event) => event.type)).toEqual(['expired']);
  });

  it('refuses a date that does not exist instead of reading another day', () => {
    // 30 February is read as 1 March: `--since 2024-02-30` silently starts a day late.
    expect(() => parseAuditArguments(['--since', '2024-02-30'], { now: NOW })).toThrow(/--since must be/);
  });
});

describe('parseTimePoint', () => {
  const now = NOW;

  it('reads a time as its start, and as an end takes in the whole of its last unit', () => {
    expect(parseTimePoint('2024-05-01 12:00:03', { now })).toEqual({ epochMs: Date.UTC(2024, 4, 1, 12, 0, 3) });
    expect(parseTimePoint('2024-05-01 12:00:03', { now, end: true })).toEqual({ epochMs: Date.UTC(2024, 4, 1, 12, 0, 3, 999) });
    expect(parseTimePoint('2024-05-01T12:00', { now, end: true })).toEqual({ epochMs: Date.UTC(2024, 4, 1, 12, 0, 59, 999) });
    expect(parseTimePoint('2024-05-01', { now, end: true })).toEqual({ epochMs: Date.UTC(2024, 4, 1, 23, 59, 59, 999) });
    expect(parseTimePoint('2024-05-01T12:00:03+02:00', { now, end: true })).toEqual({ epochMs: Date.UTC(2024, 4, 1, 10, 0, 3, 999) });
    // Milliseconds, or a duration, say exactly where the window ends.
    expect(parseTimePoint('2024-05-01T12:00:03.250Z', { now, end: true })).toEqual({ epochMs: Date.UTC(2024, 4, 1, 12, 0, 3, 250) });
    expect(parseTimePoint('1h', { now, end: true })).toEqual({ epochMs: now - 3_600_000 });
  });

  it('refuses days the calendar lacks, whatever the time and zone', () => {
    expect(parseTimePoint('2024-02-30', { now })).toEqual({ problem: 'no-such-date', date: '2024-02-30' });
    expect(parseTimePoint('2023-02-29T10:00Z', { now })).toEqual({ problem: 'no-such-date', date: '2023-02-29' });
    expect(parseTimePoint('2024-04-31 00:00:00', { now })).toEqual({ problem: 'no-such-date', date: '2024-04-31' });
    expect(parseTimePoint('2024-02-29', { now })).toEqual({ epochMs: Date.UTC(2024, 1, 29) });
    // The date is checked as typed, not as the UTC day the time falls on.
    expect(parseTimePoint('2024-05-01T01:00+02:00', { now })).toEqual({ epochMs: Date.UTC(2024, 3, 30, 23) });
    expect(parseTimePoint('2024-05-01T25:00Z', { now })).toEqual({ problem: 'unreadable' });
  });

  it('names the option and the missing day', () => {
    expect(() => parseAuditArguments(['--since', '2024-05-01', '--until', '2023-02-29'], { now })).toThrow('--until must be a day of the calendar: there is no 2023-02-29');
  });
});
