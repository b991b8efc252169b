import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { AuditEventInput } from './audit-event.js';
import type { AuditLog, AuditLogger } from './audit-log.js';
import { createMemoryAuditLog } from './memory-audit-log.js';
import { createRedisAuditLog } from '../store/redis-audit-log.js';

interface LogOptions {
  logger: AuditLogger;
  maxLength?: number;
  refusalMaxLength?: number;
  maxAgeMs?: number;
}

const implementations: Array<[string, (options: LogOptions) => AuditLog]> = [
  ['memory', (options) => createMemoryAuditLog(options)],
  // Enforcing the age cap on every append keeps the age test quick; the bot checks once a minute.
  ['redis', (options) => createRedisAuditLog({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:`, trimIntervalMs: 0, ...options })],
];

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

const requested: AuditEventInput = {
  type: 'approval-requested',
  teamId: 'T1',
  stepId: 'step-1',
  approvalId: 'apv-1',
  toolName: 'restart_service',
  input: { service: 'api', replicas: [1, 2.5], dryRun: false, note: null },
  requesterId: 'UALICE',
  channel: 'C1',
  threadTs: '1700000000.000100',
  approvers: '@oncall',
  expiresAt: 1_700_000_900_000,
};

const decided: AuditEventInput = {
  type: 'decision',
  stepId: 'step-1',
  approvalId: 'apv-1',
  toolName: 'restart_service',
  outcome: 'approved',
  userId: 'UBOB',
  originalInput: { service: 'api', token: 'xoxb-leaked' },
  editedInput: { service: 'web', auth: { password: 'hunter2' } },
  reason: 'planned maintenance',
  quorum: { have: 1, need: 2 },
};

// Same team and channel as `requested`: a thread's events share one shard's stream, which is what
// orders them (events of different shards written in the same millisecond have no defined order).
const ran = (toolCallId: string): AuditEventInput => ({
  type: 'tool-executed',
  teamId: 'T1',
  toolName: 'restart_service',
  toolCallId,
  channel: 'C1',
  threadTs: '1700000000.000100',
  status: 'error',
  exitCode: null,
  durationMs: 1234,
  error: 'killed',
});

describe.each(implementations)('%s audit log', (_name, createLog) => {
  const logs: AuditLog[] = [];
  const open = (options: Partial<LogOptions> = {}) => {
    const captured = capturingLogger();
    const log = createLog({ logger: captured.logger, ...options });
    logs.push(log);
    return { log, lines: captured.lines };
  };
  afterAll(async () => {
    for (const log of logs) await log.close();
  });

  it('reads back what was appended, oldest first, with ids and times, inputs intact', async () => {
    const { log } = open();
    const before = Date.now();
    await log.append(requested);
    await log.append({ ...ran('call-1'), at: 1_700_000_000_000 });
    // The window is of `at`: the event given its own (2023) is in it from 0.
    const events = await log.read({ sinceMs: 0 });
    expect(events).toEqual([
      { ...requested, id: expect.stringMatching(/^\d+-\d+$/), at: expect.any(Number) },
      { ...ran('call-1'), id: expect.stringMatching(/^\d+-\d+$/), at: 1_700_000_000_000 },
    ]);
    expect(events[0]!.at).toBeGreaterThanOrEqual(before);
    expect(events[0]!.id).not.toBe(events[1]!.id);
  });

  it('never stores or logs the secrets inside tool inputs', async () => {
    const { log, lines } = open();
    await log.append(decided);
    const [stored] = await log.read({ sinceMs: 0 });
    expect(stored).toMatchObject({
      originalInput: { service: 'api', token: '[redacted]' },
      editedInput: { service: 'web', auth: { password: '[redacted]' } },
      reason: 'planned maintenance',
    });
    expect(JSON.stringify(lines)).not.toMatch(/xoxb-leaked|hunter2/);
  });

  it('writes every event to the structured log too, with its stream id', async () => {
    const { log, lines } = open();
    await log.append(requested);
    const [stored] = await log.read({ sinceMs: 0 });
    expect(lines).toEqual([expect.objectContaining({ level: 30, event: 'audit', audit: stored })]);
  });

  it('reads a window of time, and with a limit the most recent events of it', async () => {
    const { log } = open();
    for (const id of ['a', 'b', 'c']) {
      await log.append(ran(id));
      await sleep(5);
    }
    const all = await log.read({ sinceMs: 0 });
    const times = all.map((event) => event.at);
    const callIds = (events: typeof all) => events.map((event) => (event.type === 'tool-executed' ? event.toolCallId : event.type));
    expect(callIds(all)).toEqual(['a', 'b', 'c']);
    expect(callIds(await log.read({ sinceMs: times[1]! }))).toEqual(['b', 'c']);
    expect(callIds(await log.read({ sinceMs: 0, untilMs: times[1]! }))).toEqual(['a', 'b']);
    expect(callIds(await log.read({ sinceMs: 0, limit: 2 }))).toEqual(['b', 'c']);
    expect(await log.read({ sinceMs: times[2]! + 1 })).toEqual([]);
  });

  it('keeps at least the newest maxLength events and drops the oldest', async () => {
    const { log } = open({ maxLength: 50 });
    for (let index = 0; index < 250; index += 1) await log.append(ran(`call-${index}`));
    const kept = (await log.read({ sinceMs: 0 })).map((event) => (event.type === 'tool-executed' ? event.toolCallId : ''));
    // Redis trims whole internal nodes (MAXLEN ~), so it may keep somewhat more; never fewer.
    expect(kept.length).toBeGreaterThanOrEqual(50);
    expect(kept.length).toBeLessThan(250);
    expect(kept).not.toContain('call-0');
    expect(kept.slice(-50)).toEqual(Array.from({ length: 50 }, (_, index) => `call-${200 + index}`));
  });

  it('caps refused actions on their own, so a flood of them never drops a decision or a run', async () => {
    const { log } = open({ maxLength: 50, refusalMaxLength: 50 });
    await log.append(requested);
    await log.append(ran('kept'));
    const refused = (attempt: number): AuditEventInput => ({ type: 'action-refused', teamId: 'T1', channel: 'C1', userId: 'UMALLORY', action: 'approve', code: 'not-approver', reason: `attempt ${attempt}` });
    for (let attempt = 0; attempt < 250; attempt += 1) await log.append(refused(attempt));
    // Refusals have a stream of their own: entries of two streams in one millisecond have no defined order.
    await sleep(2);
    await log.append(ran('after'));
    const kept = await log.read({ sinceMs: 0 });
    const reasons = kept.flatMap((event) => (event.type === 'action-refused' ? [event.reason] : []));
    // Redis trims whole internal nodes (MAXLEN ~), so it may keep somewhat more; never fewer.
    expect(reasons.length).toBeGreaterThanOrEqual(50);
    expect(reasons).not.toContain('attempt 0');
    expect(reasons.slice(-50)).toEqual(Array.from({ length: 50 }, (_, attempt) => `attempt ${200 + attempt}`));
    // Read back in one trail, in the order they happened.
    const others = kept.filter((event) => event.type !== 'action-refused').map((event) => (event.type === 'tool-executed' ? event.toolCallId : event.type));
    expect(others).toEqual(['approval-requested', 'kept', 'after']);
    expect(kept.at(-1)).toMatchObject({ type: 'tool-executed', toolCallId: 'after' });
    expect(kept.at(-2)).toMatchObject({ type: 'action-refused', reason: 'attempt 249' });
    // A reader after decisions leaves refusals out, so they do not push those out of a limited read.
    const withoutRefusals = await log.read({ sinceMs: 0, limit: 2, refusals: false });
    expect(withoutRefusals.map((event) => (event.type === 'tool-executed' ? event.toolCallId : event.type))).toEqual(['kept', 'after']);
  });

  it('drops events older than maxAgeMs', async () => {
    const { log } = open({ maxAgeMs: 300 });
    await log.append(ran('old'));
    await sleep(400);
    await log.append(ran('new'));
    expect((await log.read({ sinceMs: 0 })).map((event) => (event.type === 'tool-executed' ? event.toolCallId : ''))).toEqual(['new']);
  });
});
