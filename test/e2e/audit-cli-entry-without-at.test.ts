import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { runAuditCli } from '../../src/audit/run-audit-cli.js';

/**
 * redis-audit-log.ts: "One damaged entry (written by hand, say) must not hide the rest of the trail",
 * and its window check falls back to the entry id's time for an entry without `at`. The table, though,
 * prints utcTime(event.at) for every row: an entry that is valid JSON but has no `at` throws
 * RangeError: Invalid time value out of runAuditCli, and the reviewer sees a stack trace, not the trail.
 */
/** A trail holding one entry the bot wrote (step step-real), then `handWritten` events added straight to its stream. */
async function trailWithHandWrittenEntries(options: { name: string; handWritten: string[] }) {
  const keyPrefix = `${options.name}:${randomUUID()}:`;
  const url = inject('redisUrl');
  const log = createRedisAuditLog({ url, keyPrefix, logger: pino({ level: 'silent' }) });
  await log.append({ type: 'expired', stepId: 'step-real', approvalId: 'a', toolName: 'deploy' });
  await log.close();
  const redis = new Redis(url);
  const stream = createRedisKeys({ keyPrefix }).shard(0).audit();
  for (const json of options.handWritten) await redis.xadd(stream, '*', 'type', 'note', 'event', json);
  redis.disconnect();
  return { url, keyPrefix };
}

describe('npm run audit (table) with one entry that has no `at`', () => {
  it('still prints the rest of the trail', async () => {
    // An entry an operator added by hand (or an older/newer writer) without an `at` field.
    const { url, keyPrefix } = await trailWithHandWrittenEntries({ name: 'audit-no-at', handWritten: [JSON.stringify({ type: 'note', text: 'maintenance window' })] });

    let stdout = '';
    let stderr = '';
    let outcome: number | Error;
    try {
      outcome = await runAuditCli({ argv: ['--since', '1h'], env: { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix }, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } });
    } catch (error) {
      outcome = error as Error;
    }
    expect(outcome).toBe(0);
    expect(stdout).toContain('step step-real');
    // The entry itself is shown too, at its stream entry's time, and says that time is not its own.
    expect(stdout).toMatch(/note .*\(no event time: the entry's\) .*maintenance window/);
  });
  it('skips an entry that is valid JSON but not an object, with a warning, and prints the rest', async () => {
    const { url, keyPrefix } = await trailWithHandWrittenEntries({ name: 'audit-not-object', handWritten: ['42', '"maintenance"', '[1,2]', 'null'] });

    for (const argv of [['--since', '1h'], ['--since', '1h', '--json']]) {
      let stdout = '';
      let stderr = '';
      const code = await runAuditCli({ argv, env: { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix }, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } });
      expect(code).toBe(0);
      expect(stdout).toContain('step-real');
      expect(stdout).not.toContain('maintenance');
      expect(stderr.match(/not a JSON object/g)).toHaveLength(4);
    }
  });
});
