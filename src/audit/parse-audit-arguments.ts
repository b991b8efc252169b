import { CountersignError, ErrorCode } from '../errors/countersign-error.js';
import { parseArgs } from 'node:util';
import { parseTimePoint } from './parse-time-point.js';

/** `--help` wins over everything else, so a confused user always gets the usage. */
export type AuditCliArguments = { help: true } | AuditQuery;

export interface AuditQuery {
  help: false;
  /** Epoch milliseconds. */
  sinceMs: number;
  /** Epoch milliseconds; absent means now. */
  untilMs?: number;
  json: boolean;
  limit?: number;
}

/** Bad command-line input: the message says what to type instead. */
export class AuditUsageError extends CountersignError {
  override readonly name = 'AuditUsageError';
  readonly code = ErrorCode.AuditUsage;
}

export const DEFAULT_SINCE = '24h';

export const AUDIT_USAGE = `Usage: npm run audit -- [--since 24h] [--until TIME] [--json] [--limit N]

Prints countersign's audit trail (approval requests, decisions, refused clicks, expiries,
grants, auto-approvals, tool runs) from Redis, oldest first.

  --since TIME   start of the window (default ${DEFAULT_SINCE}): a duration ago such as 30m, 24h
                 or 7d, or an ISO date or time such as 2024-05-01T12:00:00Z (no zone means UTC)
  --until TIME   end of the window (default now), in the same forms; a time takes in the
                 whole of its last second (or minute, or day for a date alone), so a time
                 copied from the table includes that row
  --json         one JSON object per line, for a SIEM or jq
  --limit N      only the most recent N events of the window
  --help         this text

Environment: REDIS_URL (required), COUNTERSIGN_KEY_PREFIX (default countersign:)
`;

const TIME_FORMS = 'a duration such as 30m, 24h or 7d, or an ISO time such as 2024-05-01T12:00:00Z';

export function parseAuditArguments(argv: readonly string[], { now }: { now: number }): AuditCliArguments {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        since: { type: 'string' },
        until: { type: 'string' },
        json: { type: 'boolean', default: false },
        limit: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    // parseArgs explains unknown options and missing values well; only the wording of the hint is ours.
    throw new AuditUsageError(error instanceof Error ? error.message : String(error));
  }

  if (values.help) return { help: true };
  const sinceMs = timeOption({ name: '--since', text: values.since ?? DEFAULT_SINCE, now });
  const untilMs = values.until === undefined ? undefined : timeOption({ name: '--until', text: values.until, now, end: true });
  if (sinceMs >= (untilMs ?? now)) {
    throw new AuditUsageError(untilMs === undefined ? '--since must be in the past' : '--since must be before --until');
  }
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = /^\d+$/.test(values.limit) ? Number(values.limit) : Number.NaN;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new AuditUsageError(`--limit must be a whole number above 0, not "${values.limit}"`);
  }

  return {
    help: false,
    sinceMs,
    ...(untilMs !== undefined && { untilMs }),
    json: values.json,
    ...(limit !== undefined && { limit }),
  };
}

function timeOption({ name, text, now, end = false }: { name: string; text: string; now: number; end?: boolean }): number {
  const point = parseTimePoint(text, { now, end });
  if ('epochMs' in point) return point.epochMs;
  if (point.problem === 'no-such-date') throw new AuditUsageError(`${name} must be a day of the calendar: there is no ${point.date}`);
  throw new AuditUsageError(`${name} must be ${TIME_FORMS}, not "${text}"`);
}
