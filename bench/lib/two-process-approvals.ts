import type { BenchContext } from './bench-context.js';
import { botClicks } from './click-requests.js';
import { SETTLE_TIMEOUT_MS, waitForSettledWork } from './exactly-once.js';
import type { BenchResults } from './results.js';
import type { BenchScale } from './scale.js';
import { mentionRequest } from './workload.js';

/**
 * Approvals with two processes that run turns on one Redis, which is what the exactly-once count is
 * for: every other phase has one (one all-in-one process, or one worker behind the receiver), so a
 * call run twice by two processes could not happen in them. A second bot (all-in-one, or with
 * BENCH_ROLES=split a second receiver and worker) is started on the measured bot's Redis; the
 * mentions alternate between the two, and each Approve is delivered to both at once (as a Slack
 * retry landing on the other replica would be), so both race to decide and resume the same call.
 * The answers are counted with every other phase's; the calls started, from the audit trail.
 */
export async function measureTwoProcessApprovals(options: { context: BenchContext; scale: BenchScale }): Promise<BenchResults['twoProcessApprovals']> {
  const { context, scale } = options;
  const { threads: count, concurrency } = scale.twoProcessApprovals;
  const second = await context.startBot({ name: 'countersign-second', redisUrl: context.redis.url });
  const secondProcesses = [second, context.workerOf('countersign-second')].filter((server) => server !== undefined);
  const threads = context.newThreads(count);
  const sides = [context.bot, second];
  await Promise.all(
    sides.map((server, side) =>
      context.send({ url: server.eventsUrl, concurrency, requests: threads.filter((_, index) => index % 2 === side).map((thread) => mentionRequest(thread, 'card')) }),
    ),
  );
  await context.waitForTurns({ threads, mode: 'card' });
  // The card is posted before its ts is stored with the step, by whichever process ran the turn.
  await context.waitForIdle(secondProcesses.map((server) => server.handle.pid));
  const cards = await context.cardsFor(threads);
  const clicks = botClicks(cards);
  const results = await Promise.all(sides.map((server) => context.send({ url: server.eventsUrl, concurrency, requests: clicks })));
  await context.waitForResumes(cards);
  // Nothing left for either process to run (again) before the second one stops.
  const settled = await waitForSettledWork(context.redisInspector, { timeoutMs: SETTLE_TIMEOUT_MS });
  for (const server of secondProcesses) await server.handle.stop();
  const errors = results.reduce((sum, result) => sum + result.statuses.filter((status) => status !== 200).length, 0);
  context.log(`[bench]   ${threads.length} threads over two ${context.measuredBot.label === 'all-in-one process' ? 'all-in-one processes' : 'receivers and their workers'}, each Approve sent to both: ${errors} acks not 200${settled ? '' : '; work still queued or locked after the wait'}`);
  return { threads: threads.length, turnRunners: 2, clicksSentPerCard: sides.length, ackErrors: errors };
}
