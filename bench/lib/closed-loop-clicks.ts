import { request } from 'undici';
import { slackSignature } from '../../test/helpers/signed-request.js';
import type { BenchContext } from './bench-context.js';
import { approver } from './click-requests.js';
import type { BenchResults, PercentileSummary } from './results.js';
import type { BenchScale } from './scale.js';
import { median, round, spreadOf } from './stats.js';
import { clickRequest, SIGNING_SECRET } from './workload.js';

/** One round of the closed loop. */
export interface ClosedLoopRound {
  lanes: number;
  /** Clicks counted in `answeredMs`: every lane's clicks after its first. */
  clicks: number;
  answersPerSecond: number;
  /** Approve → answer posted, with `lanes` in flight. */
  answeredMs: PercentileSummary;
  /** Approve → the card shows the decision, for the same clicks: the part of `answeredMs` before the resumed turn. */
  cardUpdatedMs: PercentileSummary;
  /** Each lane's first click: all lanes click at the same instant, a burst of `lanes` rather than `lanes` in flight. */
  firstWaveMs: PercentileSummary;
}

/**
 * Approve → answer with the instant model, closed loop: `lanes` threads in flight, each clicking
 * Approve on a fresh card, waiting for the resumed answer in the thread, then taking the next card.
 * Unlike the bursts, nothing queues behind the clicks, so this is the latency a person sees. The
 * lanes' first clicks all leave at one instant, a burst of `lanes` clicks that the later ones are
 * not: they are reported apart (`firstWaveMs`), and `answeredMs` is the loop at `lanes` in flight.
 */
export async function measureClosedLoopClicks(options: {
  context: BenchContext;
  scale: BenchScale;
  onCardsReady?: () => void;
  /** Receives every counted click's latencies, for percentiles pooled over rounds. */
  collect?: { answeredMs: number[]; cardUpdatedMs: number[] };
}): Promise<ClosedLoopRound> {
  const { context, scale } = options;
  const { lanes, clicksPerLane } = scale.closedLoop;
  const threads = context.newThreads(lanes * clicksPerLane);
  await context.mentionBurst({ threads, mode: 'card', concurrency: lanes });
  const queue = await context.cardsFor(threads);
  const firstWaveMs: number[] = [];
  const answeredMs: number[] = [];
  const cardUpdatedMs: number[] = [];
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
        const thread = card.thread;
        await context.observer.waitForAnswer(thread, 120_000);
        const answered = (context.observer.answeredAt(thread) ?? Number.NaN) - sentAt;
        if (first) firstWaveMs.push(answered);
        else {
          answeredMs.push(answered);
          cardUpdatedMs.push((context.observer.firstUpdateAfter(card, sentAt) ?? Number.NaN) - sentAt);
        }
        first = false;
      }
    }),
  );
  options.collect?.answeredMs.push(...answeredMs);
  options.collect?.cardUpdatedMs.push(...cardUpdatedMs);
  return {
    lanes,
    clicks: answeredMs.length,
    answersPerSecond: round(((answeredMs.length + firstWaveMs.length) * 1000) / Math.max(1, Date.now() - startedAt), 1),
    answeredMs: spreadOf(answeredMs),
    cardUpdatedMs: spreadOf(cardUpdatedMs),
    firstWaveMs: spreadOf(firstWaveMs),
  };
}

/** `scale.closedLoop.rounds` rounds, each on fresh cards; the p99 over all of them and each round's. */
export async function measureClosedLoopRounds(options: { context: BenchContext; scale: BenchScale }): Promise<BenchResults['closedLoopClicks']> {
  const rounds: ClosedLoopRound[] = [];
  const pooled = { answeredMs: [] as number[], cardUpdatedMs: [] as number[] };
  for (let index = 0; index < options.scale.closedLoop.rounds; index += 1) {
    rounds.push(await measureClosedLoopClicks({ ...options, collect: pooled }));
  }
  return {
    lanes: options.scale.closedLoop.lanes,
    clicks: pooled.answeredMs.length,
    answersPerSecond: round(median(rounds.map((result) => result.answersPerSecond)), 1),
    answeredMs: spreadOf(pooled.answeredMs),
    cardUpdatedMs: spreadOf(pooled.cardUpdatedMs),
    p99PerRound: rounds.map((result) => result.answeredMs.p99),
    firstWaveMaxMs: Math.max(...rounds.map((result) => result.firstWaveMs.max)),
  };
}
