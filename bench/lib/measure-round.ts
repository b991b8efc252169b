import type { BenchContext } from './bench-context.js';
import { readEventLoopDelay, resetEventLoopDelay, resetRequestTimings, takeRequestTimings, type EventLoopDelay } from './inspector.js';
import { cpuMs, type LoadResult } from './processes.js';
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

/** The Chat SDK bot's side of a round: its burst, and how to wait for the posts that burst causes. */
export interface ChatSide {
  burst: () => Promise<LoadResult>;
  drain: () => Promise<void>;
}

/**
 * One round at one level: the bare app's burst, the Chat SDK bot's (when running), the bot's and
 * the bare app's again, back to back in an order that rotates from round to round, so every side sees the same
 * background noise and drift cancels. Each side's CPU and event-loop delay are taken around its
 * own burst; the bots' CPU includes draining the work the burst caused, and the bot's is that of
 * every one of its processes (with BENCH_ROLES=split the receiver and the worker that runs the turns).
 */
export async function measureRound(options: {
  context: BenchContext;
  round: number;
  bareBurst: () => Promise<LoadResult>;
  botBurst: () => Promise<LoadResult>;
  botDrain: (result: LoadResult) => Promise<void>;
  chat?: ChatSide;
}): Promise<RoundSample> {
  const { context, round } = options;
  const runBare = () => measureSide({ pids: [context.bare.handle.pid], inspectorUrl: context.bareInspectorUrl, burst: options.bareBurst });
  const runBot = () =>
    measureSide({
      pids: context.measuredBot.processes.map((server) => server.handle.pid),
      inspectorUrl: context.botInspectorUrl,
      burst: options.botBurst,
      drain: async (result) => {
        await options.botDrain(result);
        await context.waitForBotIdle();
      },
    });
  const chat = context.chat && options.chat ? { server: context.chat, side: options.chat } : undefined;
  const runChat = chat
    ? () =>
        measureSide({
          pids: [chat.server.handle.pid],
          inspectorUrl: undefined,
          burst: chat.side.burst,
          drain: async () => {
            await chat.side.drain();
            await context.waitForIdle(chat.server.handle.pid);
          },
        })
    : undefined;
  // The bare app a second time in the same round: how far two bursts of the same server differ
  // (the noise floor a bot ÷ bare ratio is read against).
  const sides: Array<{ name: 'bare' | 'bareAgain' | 'bot' | 'chat'; run: () => Promise<BurstObservation & { cpuMs: number }> }> = [
    { name: 'bare', run: runBare },
    { name: 'bot', run: runBot },
    { name: 'bareAgain', run: runBare },
    ...(runChat ? [{ name: 'chat' as const, run: runChat }] : []),
  ];
  const observed = new Map<string, BurstObservation & { cpuMs: number }>();
  for (let index = 0; index < sides.length; index += 1) {
    const side = sides[(round + index) % sides.length]!;
    observed.set(side.name, await side.run());
  }
  const botSide = observed.get('bot')!;
  const bareSide = observed.get('bare')!;
  const chatSide = observed.get('chat');
  if (process.env.BENCH_DEBUG) {
    debugRound({ log: context.log, round, side: 'bot', observation: botSide });
    debugRound({ log: context.log, round, side: 'bare', observation: bareSide });
  }
  return {
    bot: botSide.result,
    bare: bareSide.result,
    bareAgain: observed.get('bareAgain')!.result,
    botCpuMs: botSide.cpuMs,
    bareCpuMs: bareSide.cpuMs,
    botLoopDelay: botSide.delay,
    bareLoopDelay: bareSide.delay,
    botBreakdown: botSide.breakdown,
    bareBreakdown: bareSide.breakdown,
    ...(chatSide ? { chat: chatSide.result, chatCpuMs: chatSide.cpuMs } : {}),
  };
}

/** One side of a round: its burst observed from inside, and the CPU its processes spent meanwhile. */
async function measureSide(options: {
  pids: number[];
  inspectorUrl: string | undefined;
  burst: () => Promise<LoadResult>;
  drain?: (result: LoadResult) => Promise<void>;
}): Promise<BurstObservation & { cpuMs: number }> {
  const cpuOfAll = () => options.pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const before = cpuOfAll();
  const observation = await observeBurst({ inspectorUrl: options.inspectorUrl, burst: options.burst });
  await options.drain?.(observation.result);
  return { ...observation, cpuMs: cpuOfAll() - before };
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
