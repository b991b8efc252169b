import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { StoredAuditEvent } from '../audit/audit-event.js';
import { DEFAULT_AUDIT_MAX_LENGTH } from '../audit/audit-log.js';
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

  it("cuts a window on the events' `at`, not on the Redis clock of their ids, with and without a limit", async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    // The bot host's clock is 3 s behind the Redis server's.
    const log = createRedisAuditLog({ redis, keyPrefix, logger: capturingLogger().logger, now: () => Date.now() - 3_000 });
    await log.append({ ...expired, stepId: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await log.append({ ...expired, stepId: 'b' });
    const [a, b] = await log.read({ sinceMs: 0 });
    const stepIds = (events: readonly StoredAuditEvent[]) => events.map((event) => ('stepId' in event ? event.stepId : undefined));
    expect(stepIds(await log.read({ sinceMs: 0, untilMs: a!.at }))).toEqual(['a']);
    // The newest entry (b) is read and left out; the read goes on to the one in the window.
    expect(stepIds(await log.read({ sinceMs: 0, untilMs: a!.at, limit: 1 }))).toEqual(['a']);
    expect(stepIds(await log.read({ sinceMs: b!.at }))).toEqual(['b']);
    expect(stepIds(await log.read({ sinceMs: b!.at, limit: 5 }))).toEqual(['b']);
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

describe('refused actions in the Redis audit log', () => {
  const redis = new Redis(inject('redisUrl'));
  afterAll(() => redis.disconnect());
  const team = 'T0TEAM';

  /** A channel whose shard is (or is not) shard 0, where events of no channel go. */
  const channelOf = (keys: ReturnType<typeof createRedisKeys>, inShardZero: boolean) => {
    for (let index = 0; ; index += 1) {
      const channel = `C0${index.toString().padStart(6, '0')}`;
      if ((keys.ofChannel(team, channel).index === 0) === inShardZero) return channel;
    }
  };

  it('keeps an approval and its run in #ops while #random collects more refused clicks than a stream holds', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix });
    const ops = channelOf(keys, true);
    const log = createRedisAuditLog({ redis, keyPrefix, logger: pino({ level: 'silent' }) });

    await log.append({ type: 'approval-requested', teamId: team, stepId: 's-ops', approvalId: 'a-ops', toolName: 'restart_service', input: { service: 'api' }, requesterId: 'UALICE', channel: ops, threadTs: '1.1' });
    await log.append({ type: 'tool-started', teamId: team, toolName: 'restart_service', toolCallId: 'c-ops', channel: ops, threadTs: '1.1', input: { service: 'api' }, inputHash: 'h', basis: { kind: 'approval', stepId: 's-ops', approvalId: 'a-ops', version: 0, inputHash: 'h', approvedBy: ['UBOB'] } });

    // Refused clicks on a card elsewhere, without a channel (as a caller that does not know it
    // writes them), so they land in shard 0 too, the shard of #ops.
    const refusal = { type: 'action-refused', teamId: team, stepId: 's-random', approvalId: 'a-random', toolName: 'get_pods', userId: 'UMALLORY', action: 'approve', code: 'not-approver', reason: 'Only <@UBOB> can approve this' } as const;
    const total = DEFAULT_AUDIT_MAX_LENGTH + 1_000;
    try {
      for (let sent = 0; sent < total; sent += 1_000) await Promise.all(Array.from({ length: 1_000 }, () => log.append(refusal)));

      const ofOps = (await log.read({ sinceMs: 0 })).filter((event) => 'channel' in event && event.channel === ops);
      expect(ofOps.map((event) => event.type)).toEqual(['approval-requested', 'tool-started']);
      // The refusals are capped on their own: the newest are still there to read.
      const refusals = await log.read({ sinceMs: 0, limit: 10 });
      expect(refusals.map((event) => event.type)).toEqual(Array.from({ length: 10 }, () => 'action-refused'));
    } finally {
      await redis.del(...keys.shards().flatMap((shard) => [shard.audit(), shard.refusalAudit()]));
    }
  }, 180_000);

  it("stores a refusal in its channel's shard, in a stream apart from that channel's decisions", async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix });
    const random = channelOf(keys, false);
    const log = createRedisAuditLog({ redis, keyPrefix, logger: pino({ level: 'silent' }) });
    await log.append({ type: 'action-refused', teamId: team, channel: random, userId: 'UPARTNER', action: 'request', code: 'external-user', reason: 'not a member' });
    await log.append({ ...expired, teamId: team });

    const shard = keys.ofChannel(team, random);
    expect(await redis.xrange(shard.refusalAudit(), '-', '+')).toEqual([[expect.any(String), ['type', 'action-refused', 'event', expect.stringContaining(`"channel":"${random}"`)]]]);
    expect(await redis.xlen(shard.audit())).toBe(0);
    expect(await redis.xlen(keys.shard(0).refusalAudit())).toBe(0);
    // One read gives both, in the order they happened.
    expect((await log.read({ sinceMs: 0 })).map((event) => event.type)).toEqual(['action-refused', 'expired']);
  });
});
