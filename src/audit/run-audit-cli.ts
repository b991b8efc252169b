import { parseRedisTarget } from '../config/redis-target.js';
import { pino } from 'pino';
import type { StoredAuditEvent } from './audit-event.js';
import { utcTime } from './describe-audit-event.js';
import { auditJsonLines, auditTableLines } from './format-audit-table.js';
import { AUDIT_USAGE, AuditUsageError, parseAuditArguments, type AuditQuery } from './parse-audit-arguments.js';
import { RedisShardsMismatchError, RedisShardsUnknownError } from '../store/key-layout.js';
import { readRedisAudit } from '../store/read-redis-audit.js';
import { type Output, writeLines } from './write-lines.js';

export interface RunAuditCliOptions {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  stdout: Output;
  stderr: Output;
  /** Epoch milliseconds. */
  now?: number;
  /** Reads the window; `readRedisAudit` unless a test stands in for Redis. */
  readAudit?: typeof readRedisAudit;
}

export const DEFAULT_KEY_PREFIX = 'countersign:';

const NO_REDIS = `countersign audit: REDIS_URL is not set.
The audit trail lives in Redis, next to the bot's state. A bot running without REDIS_URL keeps
its state in memory, per process, and leaves no audit trail that this command could read; its
structured log (lines with "event":"audit") is then the only record.
Run this with the same REDIS_URL (and COUNTERSIGN_KEY_PREFIX, if set) as the bot.
`;

/**
 * `npm run audit`, minus the process: returns the exit code, so tests can run it in-process. An
 * error no step expected ends in one line and exit code 1, not a stack trace at the operator.
 */
export async function runAuditCli(options: RunAuditCliOptions): Promise<number> {
  try {
    return await runAudit(options);
  } catch (error) {
    // The message only: a stack says nothing to an operator, and nothing here holds REDIS_URL.
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    options.stderr.write(`countersign audit: failed: ${reason.slice(0, 500)}\n`);
    return 1;
  }
}

async function runAudit({ argv, env, stdout, stderr, now = Date.now(), readAudit = readRedisAudit }: RunAuditCliOptions): Promise<number> {
  let query: AuditQuery;
  try {
    const parsed = parseAuditArguments(argv, { now });
    if (parsed.help) {
      stdout.write(AUDIT_USAGE);
      return 0;
    }
    query = parsed;
  } catch (error) {
    if (!(error instanceof AuditUsageError)) throw error;
    stderr.write(`countersign audit: ${error.message}\n\n${AUDIT_USAGE}`);
    return 1;
  }

  const url = env.REDIS_URL?.trim();
  if (!url) {
    stderr.write(NO_REDIS);
    return 1;
  }
  const target = parseRedisTarget(url);
  if ('problem' in target) {
    // Never echo the value: it usually carries the password.
    stderr.write(`countersign audit: REDIS_URL ${target.problem}\n`);
    return 1;
  }
  const shardsText = env.COUNTERSIGN_REDIS_SHARDS?.trim();
  const shards = shardsText ? Number(shardsText) : undefined;
  if (shards !== undefined && !(Number.isInteger(shards) && shards >= 1)) {
    stderr.write('countersign audit: COUNTERSIGN_REDIS_SHARDS must be a whole number, the bot\'s\n');
    return 1;
  }
  const keyPrefix = env.COUNTERSIGN_KEY_PREFIX?.trim() || DEFAULT_KEY_PREFIX;

  let events: StoredAuditEvent[];
  try {
    const logger = pino({ level: 'warn', base: { service: 'countersign-audit' } }, { write: (line: string) => stderr.write(line) });
    events = await readAudit({ target, keyPrefix, ...(shards !== undefined && { shards }), logger, query });
  } catch (error) {
    if (error instanceof RedisShardsMismatchError) {
      // Not a connection problem: say which count is wrong rather than "check that Redis is running".
      stderr.write(
        `countersign audit: COUNTERSIGN_REDIS_SHARDS is ${error.configured}, but this Redis holds data written with ${error.stored} shards.\n` +
          `The count is read from Redis: unset COUNTERSIGN_REDIS_SHARDS, or set it to ${error.stored} as the bot has it.\n`,
      );
      return 1;
    }
    if (error instanceof RedisShardsUnknownError) {
      stderr.write(
        (error.certain
          ? `countersign audit: this Redis holds the bot's data under ${keyPrefix}, but not the shard count it was written with (${error.marker}).\n`
          : `countersign audit: this Redis records no shard count under ${error.marker}, and holds too many keys to tell whether it has the bot's data.\n`) +
          'Redis may have lost it (restarted without its data, or evicted it); a running bot writes it again within a minute.\n' +
          "Set COUNTERSIGN_REDIS_SHARDS to the bot's count to read the trail now: with another count, events would be missed.\n",
      );
      return 1;
    }
    const reason = error instanceof Error ? error.message : String(error);
    stderr.write(`countersign audit: could not read the audit trail from Redis: ${reason}\nCheck that Redis is running and that REDIS_URL is the bot's.\n`);
    return 1;
  }

  // Line by line: the window can be more than fits in one string (the events themselves are held in
  // memory: readRedisAudit returns the whole window, sorted across streams).
  if (query.json) {
    await writeLines(stdout, auditJsonLines(events));
  } else {
    await writeLines(stdout, auditTableLines(events, { now }));
    await writeLines(stdout, [summary(query, events.length, now)]);
  }
  return 0;
}

function summary(query: AuditQuery, count: number, now: number): string {
  const window = `from ${utcTime(query.sinceMs)} to ${utcTime(query.untilMs ?? now)} UTC`;
  const limited = query.limit !== undefined && count === query.limit ? `, the most recent ${count} (--limit)` : '';
  return `\n${count} ${count === 1 ? 'event' : 'events'} ${window}${limited}.\n`;
}
