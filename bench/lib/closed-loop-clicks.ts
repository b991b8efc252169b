import { pino } from 'pino';
import { request } from 'undici';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';
import { slackSignature } from '../../test/helpers/signed-request.js';
import type { BenchContext } from './bench-context.js';
import { approver } from './click-requests.js';
import type { BenchResults, PercentileSummary } from './results.js';
import type { BenchScale } from './scale.js';
import { histogramOf, median, round, spreadOf } from './stats.js';
import { type Card, clickRequest, SIGNING_SECRET, SLOW_MODEL_MS } from './workload.js';

/** What a person sees after clicking Approve, stage by stage, each from when the click was sent. */
export interface ClickStages<VALUE> {
  /** Slack's request answered (the ack). */
  ackedMs: VALUE;
  /** The card shows the decision: the part before the resumed turn. */
  cardUpdatedMs: VALUE;
  /** The approved call passed the execution gate and starts (its `tool-started` audit event). */
  toolStartedMs: VALUE;
  /** The resumed turn's answer is posted in the thread. */
  answeredMs: VALUE;
}

const STAGES = ['ackedMs', 'cardUpdatedMs', 'toolStartedMs', 'answeredMs'] as const;

/** One round of the closed loop. */
export interface ClosedLoopRound extends ClickStages<PercentileSummary> {
  lanes: number;
  /** Clicks counted in the stages: every lane's clicks after its first. */
  clicks: number;
  answersPerSecond: number;
  /** Each lane's first click: all lanes click at the same instant, a burst of `lanes` rather than `lanes` in flight. */
  firstWaveMs: PercentileSummary;
}

/**
 * Approve → answer, closed loop: `lanes` threads in flight, each clicking Approve on a fresh card,
 * waiting for the resumed answer in the thread, then taking the next card. Unlike the bursts,
 * nothing queues behind the clicks, so this is the latency a person sees. The lanes' first clicks
 * all leave at one instant, a burst of `lanes` clicks that the later ones are not: they are
 * reported apart (`firstWaveMs`), and the stages are the loop at `lanes` in flight. `mode` picks the
 * model: instant (`card`) or one that takes `SLOW_MODEL_MS` per call (`slow-card`).
 */
export async function measureClosedLoopClicks(options: {
  context: BenchContext;
  scale: BenchScale;
  mode?: 'card' | 'slow-card';
  onCardsReady?: () => void;
  /** Receives every counted click's latencies, for percentiles pooled over rounds. */
  collect?: ClickStages<number[]>;
}): Promise<ClosedLoopRound> {
  const { context, scale } = options;
  const { lanes, clicksPerLane } = scale.closedLoop;
  const threads = context.newThreads(lanes * clicksPerLane);
  await context.mentionBurst({ threads, mode: options.mode ?? 'card', concurrency: lanes });
  const queue = await context.cardsFor(threads);
  const firstWaveMs: number[] = [];
  const counted: Array<{ card: Card; sentAt: number; ackedAt: number }> = [];
  options.onCardsReady?.();
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      let first = true;
      for (let card = queue.shift(); card !== undefined; card = queue.shift()) {
        const { body } = clickRequest({ channel: card.thread.channel, threadTs: card.thread.threadTs, cardTs: card.cardTs, value: card.approveValue, user: approver(card.thread.index) });
        const timestamp = Math.floor(Date.now() / 1000);
        const sentAt = Date.now();
        // undici's request rather than fetch: the sender shares the cores with the bot (the click-cpu
        // probe's benchmark process: 1.0-1.2 ms per click with fetch, 0.65-1.1 with request).
        const response = await request(context.bot.eventsUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': slackSignature({ signingSecret: SIGNING_SECRET, timestamp, body }) },
          body,
        });
        await response.body.dump();
        const ackedAt = Date.now();
        await context.observer.waitForAnswer(card.thread, 120_000);
        if (first) firstWaveMs.push((context.observer.answeredAt(card.thread) ?? Number.NaN) - sentAt);
        else counted.push({ card, sentAt, ackedAt });
        first = false;
      }
    }),
  );
  const answersPerSecond = round(((counted.length + firstWaveMs.length) * 1000) / Math.max(1, Date.now() - startedAt), 1);
  // Read after the round, so that reading costs the bot nothing while it is measured.
  const toolStarts = await toolStartTimes(context, startedAt);
  const stages: ClickStages<number[]> = { ackedMs: [], cardUpdatedMs: [], toolStartedMs: [], answeredMs: [] };
  for (const { card, sentAt, ackedAt } of counted) {
    stages.ackedMs.push(ackedAt - sentAt);
    stages.cardUpdatedMs.push((context.observer.firstUpdateAfter(card, sentAt) ?? Number.NaN) - sentAt);
    stages.toolStartedMs.push((toolStarts.get(threadKey(card.thread)) ?? Number.NaN) - sentAt);
    stages.answeredMs.push((context.observer.answeredAt(card.thread) ?? Number.NaN) - sentAt);
  }
  for (const stage of STAGES) options.collect?.[stage].push(...stages[stage]);
  return {
    lanes,
    clicks: counted.length,
    answersPerSecond,
    ackedMs: spreadOf(stages.ackedMs),
    cardUpdatedMs: spreadOf(stages.cardUpdatedMs),
    toolStartedMs: spreadOf(stages.toolStartedMs),
    answeredMs: spreadOf(stages.answeredMs),
    firstWaveMs: spreadOf(firstWaveMs),
  };
}

const threadKey = (thread: { channel: string; threadTs: string }) => `${thread.channel}|${thread.threadTs}`;

/**
 * When each thread's approved call first started, from the bot's own audit trail (epoch ms, the bot's
 * clock: this machine's). A call started twice is counted at the end of the run (exactly-once.ts).
 */
async function toolStartTimes(context: BenchContext, sinceMs: number): Promise<Map<string, number>> {
  const audit = createRedisAuditLog({ redis: context.redisInspector, logger: pino({ level: 'silent' }) });
  const events = await audit.read({ sinceMs });
  const starts = new Map<string, number>();
  for (const event of events) if (event.type === 'tool-started' && !starts.has(threadKey(event))) starts.set(threadKey(event), event.at);
  return starts;
}

/**
 * `rounds` rounds (default `scale.closedLoop.rounds`), each on fresh cards; the stages pooled over
 * all of them, and each round's p99 of the answer.
 */
export async function measureClosedLoopRounds(options: { context: BenchContext; scale: BenchScale; mode?: 'card' | 'slow-card'; rounds?: number }): Promise<BenchResults['closedLoopClicks']> {
  const rounds: ClosedLoopRound[] = [];
  const pooled: ClickStages<number[]> = { ackedMs: [], cardUpdatedMs: [], toolStartedMs: [], answeredMs: [] };
  for (let index = 0; index < (options.rounds ?? options.scale.closedLoop.rounds); index += 1) {
    rounds.push(await measureClosedLoopClicks({ ...options, collect: pooled }));
  }
  return {
    lanes: options.scale.closedLoop.lanes,
    modelMs: options.mode === 'slow-card' ? SLOW_MODEL_MS : 0,
    clicks: pooled.answeredMs.length,
    answersPerSecond: round(median(rounds.map((result) => result.answersPerSecond)), 1),
    ackedMs: spreadOf(pooled.ackedMs),
    cardUpdatedMs: spreadOf(pooled.cardUpdatedMs),
    toolStartedMs: spreadOf(pooled.toolStartedMs),
    answeredMs: spreadOf(pooled.answeredMs),
    histograms: {
      ackedMs: histogramOf(pooled.ackedMs),
      cardUpdatedMs: histogramOf(pooled.cardUpdatedMs),
      toolStartedMs: histogramOf(pooled.toolStartedMs),
      answeredMs: histogramOf(pooled.answeredMs),
    },
    p99PerRound: rounds.map((result) => result.answeredMs.p99),
    firstWaveMaxMs: Math.max(...rounds.map((result) => result.firstWaveMs.max)),
  };
}
