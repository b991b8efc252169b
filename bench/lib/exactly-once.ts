import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { StoredAuditEvent } from '../../src/audit/audit-event.js';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';
import { sleep } from './processes.js';
import { scanKeys } from './redis-inspect.js';
import type { BenchResults, TargetCheck } from './results.js';

const KEY_PREFIX = 'countersign:';
/** The bot runs with the default shard count; its keys are computed as it computes them. */
const redisKeys = createRedisKeys({ keyPrefix: KEY_PREFIX });

/**
 * How long the run waits for the bots' Redis to settle before the audit trails are read: past the
 * lock TTL (30 s) and a sweep, so that a turn a stalled process left is recovered, and run (again,
 * if the fencing failed), before it is counted.
 */
export const SETTLE_TIMEOUT_MS = 90_000;

type ApprovedCalls = BenchResults['approvedCalls'];

/**
 * Every approved call in the audit events, and how many started (`tool-started`: written with the
 * call's executing marker, just before it runs) or finished (`tool-executed`) more than once. A call
 * is its approval (`basis.approvalId`); its finishes are matched by thread and tool call id. A call
 * started twice ran twice (or was about to) whatever was posted in the thread: a second run whose
 * answer was held back, taken back or edited into the first leaves no second "Done." to count.
 */
export function tallyApprovedCalls(events: readonly StoredAuditEvent[]): Pick<ApprovedCalls, 'calls' | 'startedMoreThanOnce' | 'finishedMoreThanOnce'> {
  const starts = new Map<string, number>();
  const callOf = new Map<string, string>();
  for (const event of events) {
    if (event.type !== 'tool-started' || event.basis.kind !== 'approval') continue;
    const approval = event.basis.approvalId;
    starts.set(approval, (starts.get(approval) ?? 0) + 1);
    callOf.set(callKey(event), approval);
  }
  const finishes = new Map<string, number>();
  for (const event of events) {
    if (event.type !== 'tool-executed') continue;
    const approval = callOf.get(callKey(event));
    if (approval !== undefined) finishes.set(approval, (finishes.get(approval) ?? 0) + 1);
  }
  const moreThanOnce = (counts: Map<string, number>) => [...counts.values()].filter((count) => count > 1).length;
  return { calls: starts.size, startedMoreThanOnce: moreThanOnce(starts), finishedMoreThanOnce: moreThanOnce(finishes) };
}

const callKey = (event: { channel: string; threadTs: string; toolCallId: string }) => `${event.channel}|${event.threadTs}|${event.toolCallId}`;

/**
 * Waits until the bot has no work left in this Redis: no thread lock held, no queued item, no thread
 * marked busy (queued or in-flight work) in any shard. That is the point after which nothing can run
 * a call again: a stalled turn's lock lapses after the TTL and its thread stays busy until a
 * recovery has run it. False if it has not settled in `timeoutMs` (then the count may be early).
 */
export async function waitForSettledWork(redis: Redis, options: { timeoutMs: number }): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await isSettled(redis)) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}

async function isSettled(redis: Redis): Promise<boolean> {
  const busy = await Promise.all(redisKeys.shards().map((shard) => redis.zcard(shard.busy())));
  if (busy.some((count) => count > 0)) return false;
  if ((await scanKeys(redis, `${KEY_PREFIX}*}:lock:*`)).length > 0) return false;
  return (await scanKeys(redis, `${KEY_PREFIX}*}:queue:*`)).length === 0;
}

/**
 * The approved calls of every Redis a bot of the run used (every shard's audit stream of each), read
 * once each Redis has settled (waited on together, so a stuck one costs `timeoutMs` once).
 */
export async function readApprovedCalls(options: { redisUrls: readonly string[]; timeoutMs?: number }): Promise<ApprovedCalls> {
  const perRedis = await Promise.all(
    options.redisUrls.map(async (url) => {
      const redis = new Redis(url);
      try {
        const settled = await waitForSettledWork(redis, { timeoutMs: options.timeoutMs ?? SETTLE_TIMEOUT_MS });
        const audit = createRedisAuditLog({ redis, logger: pino({ level: 'silent' }) });
        return { settled, events: await audit.read({ sinceMs: 0, refusals: false }) };
      } finally {
        redis.disconnect();
      }
    }),
  );
  const tally = tallyApprovedCalls(perRedis.flatMap((each) => each.events));
  return { ...tally, redises: perRedis.length, unsettledRedises: perRedis.filter((each) => !each.settled).length };
}

/**
 * Every approved click answered exactly once: no thread given the resumed answer twice (the fake
 * Slack's posts), no approved call started or finished twice (the bots' audit trails), the audit
 * read once every Redis had settled. A click never answered fails the run: each phase waits for
 * every answer.
 */
export function exactlyOnceTarget(options: { resumedAnswers: BenchResults['resumedAnswers']; approvedCalls: ApprovedCalls }): TargetCheck {
  const { resumedAnswers, approvedCalls } = options;
  const twice = resumedAnswers.answeredMoreThanOnce + approvedCalls.startedMoreThanOnce + approvedCalls.finishedMoreThanOnce;
  const settled = approvedCalls.unsettledRedises === 0;
  return {
    name: `every approved click answered exactly once (threads answered twice ${resumedAnswers.answeredMoreThanOnce} of ${resumedAnswers.threads}; calls started twice ${approvedCalls.startedMoreThanOnce}, finished twice ${approvedCalls.finishedMoreThanOnce}, of ${approvedCalls.calls} in the audit trails${settled ? '' : `; ${approvedCalls.unsettledRedises} Redis still had work queued or locked when read`})`,
    limit: 0,
    measured: twice,
    unit: 'twice',
    met: resumedAnswers.threads > 0 && approvedCalls.calls > 0 && twice === 0 && settled,
  };
}
