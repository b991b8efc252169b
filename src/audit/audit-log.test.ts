import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { appendQuietly, type AuditLog } from './audit-log.js';

describe('appendQuietly', () => {
  it('logs a failed append instead of throwing into the caller', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const broken: AuditLog = {
      append: async () => {
        throw new Error('redis is down');
      },
      read: async () => [],
      close: async () => {},
    };
    await expect(
      appendQuietly(broken, { type: 'expired', stepId: 's', approvalId: 'a', toolName: 'restart_service' }, logger),
    ).resolves.toBeUndefined();
    expect(lines).toEqual([expect.objectContaining({ level: 50, auditType: 'expired', err: expect.objectContaining({ message: 'redis is down' }) })]);
  });
});
