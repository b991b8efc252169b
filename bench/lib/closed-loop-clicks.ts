import { request } from 'undici';
import { slackSignature } from '../../test/helpers/signed-request.js';
import type { BenchContext } from './bench-context.js';
import { approver } from './click-requests.js';
import type { BenchResults } from './results.js';
import type { BenchScale } from './scale.js';
import { percentile, round } from './stats.js';
import { clickRequest, SIGNING_SECRET } from './workload.js';

/**
 * Approve → answer with the instant model, closed loop: `lanes` threads in flight, each clicking
 * Approve on a fresh card, waiting for the resumed answer in the thread, then taking the next card.
 * Unlike the bursts, nothing queues behind the clicks, so this is the latency a person sees.
 */
export async function measureClosedLoopClicks(options: { context: BenchContext; scale: BenchScale; onCardsReady?: () => void }): Promise<BenchResults['closedLoopClicks']> {
  const { context, scale } = options;
  const { lanes, clicksPerLane } = scale.closedLoop;
  const threads = context.newThreads(lanes * clicksPerLane);
  await context.mentionBurst({ threads, mode: 'card', concurrency: lanes });
  const queue = await context.cardsFor(threads);
  const answeredMs: number[] = [];
  options.onCardsReady?.();
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let card = queue.shift(); card !== undefined; card = queue.shift()) {
        const { body } = clickRequest({ channel: card.thread.channel, threadTs: card.thread.threadTs, cardTs: card.cardTs, value: card.approveValue, user: approver(card.thread.index) });
        const timestamp = Math.floor(Date.now() / 1000);
        const sentAt = Date.now();
        // undici's request rather than fetch: the sender shares the cores with the bot, and fetch
        // costs it about three times the CPU per click.
        const response = await request(context.bot.eventsUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': slackSignature({ signingSecret: SIGNING_SECRET, timestamp, body }) },
          body,
        });
        await response.body.dump();
        const thread = card.thread;
        await context.observer.waitForAnswer(thread, 120_000);
        answeredMs.push((context.observer.answeredAt(thread) ?? Number.NaN) - sentAt);
      }
    }),
  );
  const sorted = [...answeredMs].sort((left, right) => left - right);
  return {
    lanes,
    clicks: answeredMs.length,
    answersPerSecond: round((answeredMs.length * 1000) / Math.max(1, Date.now() - startedAt), 1),
    answeredMs: { p50: round(percentile(sorted, 0.5), 1), p99: round(percentile(sorted, 0.99), 1), max: round(sorted.at(-1) ?? Number.NaN, 1) },
  };
}
