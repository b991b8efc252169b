import { describe, expect, it } from 'vitest';
import { AuditUsageError, parseAuditArguments } from './parse-audit-arguments.js';

const now = Date.UTC(2024, 4, 2, 12, 0, 0);
const hour = 3_600_000;
const parse = (...argv: string[]) => parseAuditArguments(argv, { now });

describe('parseAuditArguments', () => {
  it('shows the last day by default, as a table', () => {
    expect(parse()).toEqual({ help: false, sinceMs: now - 24 * hour, json: false });
  });

  it('takes durations ago and ISO times, reading zone-less times as UTC like the table', () => {
    expect(parse('--since', '30m')).toMatchObject({ sinceMs: now - 30 * 60_000 });
    expect(parse('--since', '7d', '--until', '1h')).toMatchObject({ sinceMs: now - 7 * 24 * hour, untilMs: now - hour });
    expect(parse('--since=2024-05-01')).toMatchObject({ sinceMs: Date.UTC(2024, 4, 1) });
    expect(parse('--since', '2024-05-01 12:00:03')).toMatchObject({ sinceMs: Date.UTC(2024, 4, 1, 12, 0, 3) });
    expect(parse('--since', '2024-05-01T12:00:00+02:00')).toMatchObject({ sinceMs: Date.UTC(2024, 4, 1, 10) });
  });

  it('takes --json and --limit', () => {
    expect(parse('--json', '--limit', '20')).toMatchObject({ json: true, limit: 20 });
  });

  it('explains what it expected when an argument is wrong', () => {
    expect(() => parse('--since', 'yesterday')).toThrow(new AuditUsageError('--since must be a duration such as 30m, 24h or 7d, or an ISO time such as 2024-05-01T12:00:00Z, not "yesterday"'));
    expect(() => parse('--since', '2024-13-45')).toThrow(/--since must be/);
    expect(() => parse('--since', '1h', '--until', '2h')).toThrow('--since must be before --until');
    expect(() => parse('--since', '2030-01-01')).toThrow('--since must be in the past');
    expect(() => parse('--limit', '0')).toThrow('--limit must be a whole number above 0, not "0"');
    expect(() => parse('--limit', 'ten')).toThrow(AuditUsageError);
    expect(() => parse('--sinse', '1h')).toThrow(/Unknown option '--sinse'/);
    expect(() => parse('24h')).toThrow(AuditUsageError);
    expect(() => parse('--since')).toThrow(/argument missing/);
  });

  it('answers --help whatever else is on the line', () => {
    expect(parse('--since', 'nonsense', '--help')).toEqual({ help: true });
  });
});
