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
describe('npm run audit (table) with one entry that has no `at`', () => {
  it('still prints the rest of the trail', async () => {
    const keyPrefix = `audit-no-at:${randomUUID()}:`;
    const url = inject('redisUrl');
    const log = createRedisAuditLog({ url, keyPrefix, logger: pino({ level: 'silent' }) });
    await log.append({ type: 'expired', stepId: 'step-real', approvalId: 'a', toolName: 'deploy' });
    await log.close();
    // An entry an operator added by hand (or an older/newer writer) without an `at` field.
    const redis = new Redis(url);
    const stream = createRedisKeys({ keyPrefix }).shard(0).audit();
    await redis.xadd(stream, '*', 'type', 'note', 'event', JSON.stringify({ type: 'note', text: 'maintenance window' }));
    redis.disconnect();

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
    const keyPrefix = `audit-not-object:${randomUUID()}:`;
    const url = inject('redisUrl');
    const log = createRedisAuditLog({ url, keyPrefix, logger: pino({ level: 'silent' }) });
    await log.append({ type: 'expired', stepId: 'step-real', approvalId: 'a', toolName: 'deploy' });
    await log.close();
    const redis = new Redis(url);
    const stream = createRedisKeys({ keyPrefix }).shard(0).audit();
    for (const json of ['42', '"maintenance"', '[1,2]', 'null']) await redis.xadd(stream, '*', 'type', 'note', 'event', json);
    redis.disconnect();

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
