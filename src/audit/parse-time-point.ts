const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

const ISO_TIME = /^(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** A time point, or why the text is none: not one of the forms, or a day the calendar lacks (30 February). */
export type TimePoint = { epochMs: number } | { problem: 'unreadable' } | { problem: 'no-such-date'; date: string };

/**
 * A point in time as people type it on the command line: a duration ago (`30m`, `24h`, `7d`) or an
 * ISO date or time. Times without a zone are read as UTC, the zone the table prints in, so copying
 * a time from the table into `--since` finds that row. As the end of a window (`end`), a time stands
 * for all of its last unit: the table prints times to the second, so `--until 12:00:03` copied from
 * it must take in the row at 12:00:03.480, and `--until 2024-05-01` the whole of that day.
 */
export function parseTimePoint(text: string, { now, end = false }: { now: number; end?: boolean }): TimePoint {
  const trimmed = text.trim();
  const duration = /^(\d+)\s*([smhdw])$/i.exec(trimmed);
  if (duration) return { epochMs: now - Number(duration[1]) * UNIT_MS[duration[2]!.toLowerCase() as keyof typeof UNIT_MS] };
  const parts = ISO_TIME.exec(trimmed);
  if (!parts) return { problem: 'unreadable' };
  const [, date, seconds, fraction, zone] = parts as unknown as [string, string, string | undefined, string | undefined, string | undefined];
  // Date.parse rolls a day past the month's end over (2024-02-30 is 1 March), which would move the window silently.
  if (!dayExists(date)) return { problem: 'no-such-date', date };
  const hasTime = trimmed.length > date.length;
  const iso = hasTime && zone === undefined ? `${trimmed.replace(' ', 'T')}Z` : trimmed.replace(' ', 'T');
  const epochMs = Date.parse(iso);
  if (Number.isNaN(epochMs)) return { problem: 'unreadable' };
  if (!end || fraction !== undefined) return { epochMs };
  const precisionMs = !hasTime ? UNIT_MS.d : seconds === undefined ? UNIT_MS.m : UNIT_MS.s;
  return { epochMs: epochMs + precisionMs - 1 };
}

function dayExists(date: string): boolean {
  const epochMs = Date.parse(date);
  return !Number.isNaN(epochMs) && new Date(epochMs).toISOString().slice(0, 10) === date;
}
