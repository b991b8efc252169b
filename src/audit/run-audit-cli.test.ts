import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { parseRedisTarget, type RedisTarget } from '../config/redis-target.js';
import { createRedisAuditLog } from '../store/redis-audit-log.js';
import { runAuditCli } from './run-audit-cli.js';

async function run(argv: string[], env: Record<string, string | undefined>) {
  let stdout = '';
  let stderr = '';
  const exitCode = await runAuditCli({
    argv,
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { exitCode, stdout, stderr };
}

describe('npm run audit, in-process', () => {
  it('explains that the audit trail needs Redis when REDIS_URL is not set', async () => {
    const result = await run(['--since', '1h'], {});
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('REDIS_URL is not set');
    expect(result.stderr).toContain('in memory');
  });

  it('refuses a REDIS_URL that is not one without repeating it, since it may hold a password', async () => {
    const result = await run([], { REDIS_URL: 'http://user:s3cret@example.com' });
    expect(result).toMatchObject({ exitCode: 1, stdout: '' });
    expect(result.stderr).toContain('REDIS_URL must be a URL starting with redis://');
    expect(result.stderr).not.toContain('s3cret');
  });

  it('prints the usage for --help and for a mistake', async () => {
    expect(await run(['--help'], {})).toMatchObject({ exitCode: 0, stdout: expect.stringContaining('Usage: npm run audit') });
    const wrong = await run(['--limit', '-3'], { REDIS_URL: inject('redisUrl') });
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toMatch(/^countersign audit: .*--limit/);
    expect(wrong.stderr).toContain('Usage: npm run audit');
  });

  it('says when the window is empty and when --limit cut it short', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const env = { REDIS_URL: inject('redisUrl'), COUNTERSIGN_KEY_PREFIX: keyPrefix };
    const empty = await run(['--since', '1h'], env);
    expect(empty.exitCode).toBe(0);
    expect(empty.stdout).toMatch(/^No audit events\.\n\n0 events from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to .* UTC\.\n$/);

    const log = createRedisAuditLog({ url: inject('redisUrl'), keyPrefix, logger: pino({ level: 'silent' }) });
    for (const stepId of ['s1', 's2', 's3']) await log.append({ type: 'expired', stepId, approvalId: 'a', toolName: 'deploy' });
    await log.close();
    const limited = await run(['--since', '1h', '--limit', '2'], env);
    expect(limited.stdout).toContain('step s2');
    expect(limited.stdout).toContain('step s3');
    expect(limited.stdout).not.toContain('step s1');
    expect(limited.stdout).toMatch(/2 events from .* UTC, the most recent 2 \(--limit\)\.\n$/);
  });

  it('reads the trail of a Redis Cluster, the streams of every shard merged in time order', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const url = inject('redisClusterUrl');
    const log = createRedisAuditLog({ target: parseRedisTarget(url) as RedisTarget, keyPrefix, logger: pino({ level: 'silent' }) });
    // Events of different channels go to their channels' shards (here on two of the three masters).
    // Shards' streams are merged by entry id (milliseconds, then sequence): two events written in the
    // same millisecond to different shards have no defined order, so these are a few ms apart.
    for (const channel of ['C1', 'C2', 'C3', 'C4']) {
      await log.append({ type: 'approval-requested', stepId: `step-${channel}`, approvalId: 'a', toolName: 'deploy', input: {}, requesterId: 'UALICE', teamId: 'T1', channel, threadTs: '1.1' });
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    await log.close();
    const result = await run(['--since', '1h', '--json'], { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { stepId: string }).stepId)).toEqual(['step-C1', 'step-C2', 'step-C3', 'step-C4']);
  });
});
