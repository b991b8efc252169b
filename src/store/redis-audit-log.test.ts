import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRedisAuditLog } from './redis-audit-log.js';
import { createRedisKeys } from './redis-keys.js';

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

const expired = { type: 'expired', stepId: 'step-1', approvalId: 'apv-1', toolName: 'restart_service' } as const;

describe('the Redis audit log', () => {
  const redis = new Redis(inject('redisUrl'));
  afterAll(() => redis.disconnect());

  it('is one stream per shard of a key prefix, readable with redis-cli', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const log = createRedisAuditLog({ redis, keyPrefix, logger: capturingLogger().logger });
    await log.append(expired);
    const entries = await redis.xrange(createRedisKeys({ keyPrefix }).shard(0).audit(), '-', '+');
    expect(entries).toEqual([[expect.any(String), ['type', 'expired', 'event', expect.stringContaining('"stepId":"step-1"')]]]);
    await log.close();
    // The client was the caller's, so it is still usable.
    expect(await redis.ping()).toBe('PONG');
  });

  it('skips an entry that is not an event rather than failing the whole read (and still reads the stream of the untagged layout)', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const { logger, lines } = capturingLogger();
    const log = createRedisAuditLog({ redis, keyPrefix, logger });
    await redis.xadd(`${keyPrefix}audit`, '*', 'note', 'added by hand');
    await log.append(expired);
    expect(await log.read({ sinceMs: 0 })).toEqual([expect.objectContaining({ type: 'expired' })]);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'Skipped an audit entry that is not valid JSON' }));
  });

  it('rejects when Redis is unreachable, and the structured log still has the event', async () => {
    const { logger, lines } = capturingLogger();
    const log = createRedisAuditLog({ url: 'redis://127.0.0.1:1', keyPrefix: 'test:', logger });
    const started = Date.now();
    await expect(log.append({ ...expired, teamId: 'T1' })).rejects.toThrow('Could not append the audit event to Redis');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lines).toContainEqual(expect.objectContaining({ event: 'audit', stored: false, audit: expect.objectContaining({ type: 'expired', teamId: 'T1' }) }));
    await log.close();
  });
});
