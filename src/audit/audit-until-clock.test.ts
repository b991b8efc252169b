import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisAuditLog } from '../store/redis-audit-log.js';
import { runAuditCli } from './run-audit-cli.js';

async function run(argv: string[], env: Record<string, string | undefined>) {
  let stdout = '';
  const exitCode = await runAuditCli({ argv, env, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => {} } });
  return { exitCode, stdout };
}

/**
 * README (Audit trail): "`--until` takes in the whole of the second … it names, so a time copied from the
 * table includes that row". The table prints the event's `at` (the bot host's clock); the window is cut
 * by stream entry ids (the Redis server's clock). A bot host 3 s behind its Redis (or 3 ms, at a second's
 * edge) prints a time that, copied into --until, leaves the row out.
 */
describe('npm run audit --until with a time copied from the table', () => {
  it('includes the row whose TIME was copied, when the bot host and Redis clocks differ', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const env = { REDIS_URL: inject('redisUrl'), COUNTERSIGN_KEY_PREFIX: keyPrefix };
    const log = createRedisAuditLog({ url: inject('redisUrl'), keyPrefix, logger: pino({ level: 'silent' }), now: () => Date.now() - 3_000 });
    await log.append({ type: 'expired', stepId: 'step-copied', approvalId: 'a', toolName: 'deploy' });
    await log.close();

    const table = await run(['--since', '1h'], env);
    const row = table.stdout.split('\n').find((line) => line.includes('step-copied'));
    expect(row).toBeDefined();
    const time = row!.slice(0, 19); // "YYYY-MM-DD HH:MM:SS" as printed
    const until = await run(['--since', '1h', '--until', time], env);
    expect(until.exitCode).toBe(0);
    expect(until.stdout).toContain('step-copied');
  });
});
