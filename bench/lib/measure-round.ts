import type { BenchContext } from './bench-context.js';
import { readEventLoopDelay, resetEventLoopDelay, resetRequestTimings, takeRequestTimings, type EventLoopDelay } from './inspector.js';
import { cpuMs, waitForCpuIdle, type LoadResult } from './processes.js';
import { breakdownSample, type AckBreakdownSample, type RoundSample } from './round-statistics.js';

interface BurstObservation {
  result: LoadResult;
  delay?: EventLoopDelay;
  breakdown?: AckBreakdownSample;
}

/**
 * Runs a burst and returns, from inside the server, the event-loop delay it saw meanwhile and
 * when each request was accepted, read and acked.
 */
export async function observeBurst(options: { inspectorUrl: string | undefined; burst: () => Promise<LoadResult> }): Promise<BurstObservation> {
  const { inspectorUrl } = options;
  if (inspectorUrl) {
    await resetEventLoopDelay(inspectorUrl);
    await resetRequestTimings(inspectorUrl);
  }
  const result = await options.burst();
  if (!inspectorUrl) return { result };
  const delay = await readEventLoopDelay(inspectorUrl);
  return { result, delay, breakdown: breakdownSample({ result, timings: await takeRequestTimings(inspectorUrl) }) };
}

/**
 * One round at one level: the bare app's burst and the bot's, back to back in alternating order
 * (bare first in even rounds, bot first in odd ones), so both see the same background noise and
 * drift cancels. Each side's CPU and event-loop delay are taken around its own burst; the bot's
 * CPU includes draining the work the burst caused.
 */
export async function measureRound(options: {
  context: BenchContext;
  round: number;
  bareBurst: () => Promise<LoadResult>;
  botBurst: () => Promise<LoadResult>;
  botDrain: (result: LoadResult) => Promise<void>;
}): Promise<RoundSample> {
  const { context, round } = options;
  const runBare = () => measureSide({ pid: context.bare.handle.pid, inspectorUrl: context.bareInspectorUrl, burst: options.bareBurst });
  const runBot = () =>
    measureSide({
      pid: context.bot.handle.pid,
      inspectorUrl: context.botInspectorUrl,
      burst: options.botBurst,
      drain: async (result) => {
        await options.botDrain(result);
        await waitForCpuIdle(context.bot.handle.pid);
      },
    });
  const bareFirst = round % 2 === 0;
  const first = bareFirst ? await runBare() : await runBot();
  const second = bareFirst ? await runBot() : await runBare();
  const [bareSide, botSide] = bareFirst ? [first, second] : [second, first];
  if (process.env.BENCH_DEBUG) {
    debugRound({ log: context.log, round, side: 'bot', observation: botSide });
    debugRound({ log: context.log, round, side: 'bare', observation: bareSide });
  }
  return {
    bot: botSide.result,
    bare: bareSide.result,
    botCpuMs: botSide.cpuMs,
    bareCpuMs: bareSide.cpuMs,
    botLoopDelay: botSide.delay,
    bareLoopDelay: bareSide.delay,
    botBreakdown: botSide.breakdown,
    bareBreakdown: bareSide.breakdown,
  };
}

/** One side of a round: its burst observed from inside, and the CPU its process spent meanwhile. */
async function measureSide(options: {
  pid: number;
  inspectorUrl: string | undefined;
  burst: () => Promise<LoadResult>;
  drain?: (result: LoadResult) => Promise<void>;
}): Promise<BurstObservation & { cpuMs: number }> {
  const before = cpuMs(options.pid);
  const observation = await observeBurst({ inspectorUrl: options.inspectorUrl, burst: options.burst });
  await options.drain?.(observation.result);
  return { ...observation, cpuMs: cpuMs(options.pid) - before };
}

/** BENCH_DEBUG=1: where in a burst the slow requests were sent. */
function debugRound(options: { log: (line: string) => void; round: number; side: string; observation: BurstObservation }): void {
  const { result, delay } = options.observation;
  const slow = result.latenciesMs
    .map((ms, index) => ({ ms, sentAt: result.sentAtMs[index] ?? Number.NaN }))
    .filter((request) => request.ms > 500)
    .map((request) => `${Math.round(request.sentAt)}→${Math.round(request.ms)}`);
  options.log(
    `[debug] round ${options.round} ${options.side}: wall ${Math.round(result.wallMs)} ms, loop p99 ${delay?.p99Ms ?? '?'} max ${delay?.maxMs ?? '?'}, slow (sent at→ms): ${slow.slice(0, 30).join(' ')}${slow.length > 30 ? ` … (${slow.length})` : ''}`,
  );
}
