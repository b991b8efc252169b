const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/**
 * A point in time as people type it on the command line: a duration ago (`30m`, `24h`, `7d`) or an
 * ISO date or time. Times without a zone are read as UTC, the zone the table prints in, so copying
 * a time from the table into `--since` finds that row. Undefined when it is neither.
 */
export function parseTimePoint(text: string, { now }: { now: number }): number | undefined {
  const trimmed = text.trim();
  const duration = /^(\d+)\s*([smhdw])$/i.exec(trimmed);
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]!.toLowerCase() as keyof typeof UNIT_MS];
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(trimmed)) return undefined;
  const hasTime = trimmed.length > 10;
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed.slice(10));
  const iso = hasTime && !hasZone ? `${trimmed.replace(' ', 'T')}Z` : trimmed.replace(' ', 'T');
  const epochMs = Date.parse(iso);
  return Number.isNaN(epochMs) ? undefined : epochMs;
}
