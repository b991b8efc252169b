import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { AuditEventInput } from '../../src/audit/audit-event.js';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { assembleResults } from '../../bench/lib/benchmark-results.js';
import { readApprovedCalls, tallyApprovedCalls, waitForSettledWork } from '../../bench/lib/exactly-once.js';
import type { BenchResults } from '../../bench/lib/results.js';
import { SCALES } from '../../bench/lib/scale.js';
import { createSlackObserver, RESUMED_ANSWER } from '../../bench/lib/workload.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';

let servers: RedisServerHandle[] = [];
beforeEach(async () => {
  servers = [await startRedisServer(), await startRedisServer()];
});
afterEach(async () => {
  for (const server of servers) await server.stop();
});

const TEAM = 'T0BENCH01';
let sequence = 0;

/** An approved call's run as the bot records it: `tool-started` with the marker, `tool-executed` after. */
function approvedRun(options: { channel: string; threadTs: string; approvalId: string }): AuditEventInput[] {
  sequence += 1;
  const where = { teamId: TEAM, channel: options.channel, threadTs: options.threadTs, toolName: 'bench_restart', toolCallId: `call-${options.approvalId}` };
  return [
    { type: 'tool-started', ...where, input: { service: 'worker' }, inputHash: 'h', basis: { kind: 'approval', stepId: `step-${sequence}`, approvalId: options.approvalId, version: 1, inputHash: 'h', approvedBy: ['UAPPROVER'] } },
    { type: 'tool-executed', ...where, status: 'ok', exitCode: 0, durationMs: 3 },
  ];
}

async function append(url: string, events: AuditEventInput[]): Promise<void> {
  const redis = new Redis(url);
  const audit = createRedisAuditLog({ redis, logger: pino({ level: 'silent' }) });
  for (const event of events) await audit.append(event);
  redis.disconnect();
}

/** The surface of the fake Slack the observer reads. */
function stubSlack() {
  const calls: Array<{ method: string; args: Record<string, unknown>; at: number }> = [];
  const listeners: Array<() => void> = [];
  return {
    calls,
    onCall: (listener: () => void) => listeners.push(listener),
    messages: () => [],
    record(method: string, args: Record<string, unknown>) {
      calls.push({ method, args, at: Date.now() });
      for (const listener of listeners) listener();
    },
  };
}

/** assembleResults with every other phase's measurement empty: only the exactly-once target matters here. */
function judge(options: { resumedAnswers: BenchResults['resumedAnswers']; approvedCalls: BenchResults['approvedCalls'] }) {
  const results = assembleResults({
    scale: SCALES.smoke,
    startedAt: Date.now(),
    loadAverageAtStart: [0, 0, 0],
    ackLatency: { mention: [], click: [], repeatClick: [], throughput: undefined, clickEndToEnd: [] },
    pending: { rssPoints: [], creation: { turns: 0, cpuMs: 0, wallMs: 0, processes: 'all-in-one process', cpuMsByProcess: {} }, rssProcess: 'all-in-one process', usedMemoryAtZero: 0, usedMemoryAtMax: 0, pendingThreads: [] },
    memory: { bytesPerPendingApproval: 0 } as never,
    accounting: { perClick: { decisionRoundTrips: 2, resumeRoundTrips: 6 }, perTurn: {} } as never,
    turnThroughput: { modelMs: 500, runs: [] },
    closedLoopClicks: { lanes: 1, answeredMs: { p50: 1, p99: 1, max: 1 } } as never,
    closedLoopClicksSlowModel: {} as never,
    openLoop: [],
    historySweep: [],
    twoProcessApprovals: { threads: 0, turnRunners: 2, clicksSentPerCard: 2, ackErrors: 0 },
    phaseMs: {},
    ...options,
  } as never);
  const target = results.targets.find((each) => each.name.startsWith('every approved click answered exactly once'));
  if (!target) throw new Error('no exactly-once target');
  return target;
}

/**
 * The reviewer's case: the thread got one plain "Done." (the second run's answer was edited into it,
 * not posted anew), so the Slack tally sees it answered once; the audit trail has the call started
 * twice. The exactly-once figure was the Slack tally alone.
 */
it('a call started twice fails "answered exactly once" although its thread shows one answer', async () => {
  const slack = stubSlack();
  const observer = createSlackObserver(slack as never);
  const thread = { channel: 'CB000001', threadTs: '1600000101.000100' };
  slack.record('chat.postMessage', { channel: thread.channel, thread_ts: thread.threadTs, text: 'card', blocks: [] });
  slack.record('chat.postMessage', { channel: thread.channel, thread_ts: thread.threadTs, text: RESUMED_ANSWER });
  slack.record('chat.update', { channel: thread.channel, ts: '1600000101.000300', text: RESUMED_ANSWER });
  observer.poll();
  const resumedAnswers = observer.resumedAnswerTally();
  expect(resumedAnswers).toEqual({ threads: 1, answeredMoreThanOnce: 0 });

  const [server] = servers;
  const run = approvedRun({ ...thread, approvalId: 'approval-twice' });
  await append(server!.url, [...run, ...run]);
  const approvedCalls = await readApprovedCalls({ redisUrls: [server!.url], timeoutMs: 1_000 });
  expect(approvedCalls).toMatchObject({ calls: 1, startedMoreThanOnce: 1, finishedMoreThanOnce: 1, unsettledRedises: 0 });

  const target = judge({ resumedAnswers, approvedCalls });
  expect(target.met).toBe(false);
  expect(target.measured).toBe(2);
});

it('counts every shard of every Redis, one start and one finish per approval being once', async () => {
  const keys = createRedisKeys({ keyPrefix: 'countersign:' });
  // Channels in different shards, in two Redis (the measured bot's and another phase's).
  const channels = Array.from({ length: 40 }, (_, index) => `CB${String(index).padStart(6, '0')}`);
  const shardsUsed = new Set(channels.map((channel) => keys.ofChannel(TEAM, channel).index));
  expect(shardsUsed.size).toBeGreaterThan(4);
  const [first, second] = servers;
  await append(first!.url, channels.slice(0, 20).flatMap((channel, index) => approvedRun({ channel, threadTs: '1.0001', approvalId: `a${index}` })));
  await append(second!.url, [...channels.slice(20).flatMap((channel, index) => approvedRun({ channel, threadTs: '1.0001', approvalId: `b${index}` }))]);
  // One call run again in the second Redis, in the last channel's shard.
  await append(second!.url, approvedRun({ channel: channels.at(-1)!, threadTs: '1.0001', approvalId: 'b19' }).slice(0, 1));
  const approvedCalls = await readApprovedCalls({ redisUrls: servers.map((server) => server.url), timeoutMs: 1_000 });
  expect(approvedCalls).toEqual({ calls: 40, startedMoreThanOnce: 1, finishedMoreThanOnce: 0, redises: 2, unsettledRedises: 0 });
});

it('calls that need no approval are not approved calls', () => {
  const [started] = approvedRun({ channel: 'C1', threadTs: '1.1', approvalId: 'x' });
  const granted = { ...(started as Extract<AuditEventInput, { type: 'tool-started' }>), basis: { kind: 'grant' as const, grantId: 'g', grantedBy: 'U1' }, at: 1, id: '1-0' };
  expect(tallyApprovedCalls([granted, { ...granted, id: '1-1' }])).toEqual({ calls: 0, startedMoreThanOnce: 0, finishedMoreThanOnce: 0 });
});

it('waits until no thread lock is held and no work is queued or busy, and says when that did not come', async () => {
  const redis = new Redis(servers[0]!.url);
  try {
    const shard = createRedisKeys({ keyPrefix: 'countersign:' }).shard(3);
    await redis.set(shard.lock('T:C:1.1'), 'token', 'PX', 600);
    await redis.zadd(shard.busy(), 1, 'T:C:1.1');
    await redis.rpush(shard.queue('T:C:1.1'), 'item');
    expect(await waitForSettledWork(redis, { timeoutMs: 300 })).toBe(false);
    // What a recovery does once the lock has lapsed: take the queued item, run it, clear the thread.
    let recovered = false;
    const recovery = (async () => {
      while ((await redis.exists(shard.lock('T:C:1.1'))) === 1) await new Promise((resolve) => setTimeout(resolve, 50));
      await redis.del(shard.queue('T:C:1.1'));
      await redis.zrem(shard.busy(), 'T:C:1.1');
      recovered = true;
    })();
    expect(await waitForSettledWork(redis, { timeoutMs: 10_000 })).toBe(true);
    expect(recovered).toBe(true);
    await recovery;
  } finally {
    redis.disconnect();
  }
});
