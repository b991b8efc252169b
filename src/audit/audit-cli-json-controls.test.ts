import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisAuditLog } from '../store/redis-audit-log.js';
import { runAuditCli } from './run-audit-cli.js';

/**
 * `npm run audit -- --json` is what an operator pipes to jq or reads at the terminal during an
 * incident. JSON.stringify escapes only U+0000-U+001F: C1 controls (U+0080-U+009F; U+009B is CSI,
 * U+009D OSC, which xterm and others act on in UTF-8) and bidirectional overrides from a deny reason
 * or a model's input reach the terminal raw, while the table cleans exactly these.
 */
describe('npm run audit --json with hostile text', () => {
  it('writes no C1 control or bidirectional override to the terminal', async () => {
    const keyPrefix = `audit-json-controls:${randomUUID()}:`;
    const url = inject('redisUrl');
    const log = createRedisAuditLog({ url, keyPrefix, logger: pino({ level: 'silent' }) });
    const originalInput = { service: 'api\u009b2J\u009b31mAPPROVED' };
    const reason = 'looks fine \u009d0;pwned\u009c \u202edevorppa';
    await log.append({ type: 'decision', teamId: 'T1', stepId: 's1', approvalId: 'a1', toolName: 'deploy', outcome: 'denied', userId: 'UMALLORY', originalInput, reason });
    await log.close();
    let stdout = '';
    const exitCode = await runAuditCli({ argv: ['--since', '1h', '--json'], env: { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix }, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => {} } });
    expect(exitCode).toBe(0);
    expect(stdout).toContain('UMALLORY');
    expect(stdout).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
    // Still JSON a SIEM or jq reads back to exactly what was written.
    expect(JSON.parse(stdout)).toMatchObject({ originalInput, reason });
  });
});
