import type { EventLoopDelay, ServerRequestTiming } from './inspector.js';
import type { LoadResult } from './processes.js';
import type { AckBreakdown, LevelResult } from './results.js';
import { median, percentile, ratio, round, summarize, type LatencySummary } from './stats.js';

/** One round at one level: the bot's burst and the bare app's, with what each process saw meanwhile. */
export interface RoundSample {
  bot: LoadResult;
  bare: LoadResult;
  /** The bare app's second burst of the round (A/A: the noise floor). */
  bareAgain: LoadResult;
  botCpuMs: number;
  bareCpuMs: number;
  botLoopDelay: EventLoopDelay | undefined;
  bareLoopDelay: EventLoopDelay | undefined;
  botBreakdown: AckBreakdownSample | undefined;
  bareBreakdown: AckBreakdownSample | undefined;
  /** The Chat SDK bot's burst, when the second baseline runs. */
  chat?: LoadResult;
  chatCpuMs?: number;
}

/** Per request of a burst: ms from sending until the server had read it, and from then to the ack. */
export interface AckBreakdownSample {
  waitMs: number[];
  handleMs: number[];
  /** Requests on new connections: ms from sending until the connection was accepted. */
  acceptMs: number[];
}

/**
 * Matches the server's timings to the requests of one burst (by the index the load generator sent
 * with each). Requests the server has no finished timing for are left out rather than guessed.
 */
export function breakdownSample(options: { result: LoadResult; timings: Map<number, ServerRequestTiming> }): AckBreakdownSample {
  const { result, timings } = options;
  const sample: AckBreakdownSample = { waitMs: [], handleMs: [], acceptMs: [] };
  result.sentAtMs.forEach((offset, index) => {
    const timing = timings.get(index);
    if (!timing || timing.finishedAt === undefined) return;
    const sentAt = result.startedAt + offset;
    // Clamped at 0: the load generator's and the server's clocks are read in different processes.
    sample.waitMs.push(Math.max(0, timing.startedAt - sentAt));
    sample.handleMs.push(timing.finishedAt - timing.startedAt);
    if (timing.acceptedAt !== undefined) sample.acceptMs.push(Math.max(0, timing.acceptedAt - sentAt));
  });
  return sample;
}

/** The breakdown pooled over rounds; undefined when no round was observed from inside (no inspector). */
export function breakdownSummary(samples: Array<AckBreakdownSample | undefined>): AckBreakdown | undefined {
  const known = samples.filter((sample): sample is AckBreakdownSample => sample !== undefined);
  if (known.length === 0) return undefined;
  const summary = (values: number[]) => {
    const sorted = [...values].sort((left, right) => left - right);
    return { p50: round(percentile(sorted, 0.5)), p99: round(percentile(sorted, 0.99)), max: round(sorted.at(-1) ?? Number.NaN) };
  };
  const accept = known.flatMap((sample) => sample.acceptMs);
  return {
    requests: known.reduce((sum, sample) => sum + sample.waitMs.length, 0),
    beforeReadMs: summary(known.flatMap((sample) => sample.waitMs)),
    readToAckMs: summary(known.flatMap((sample) => sample.handleMs)),
    newConnections: accept.length,
    ...(accept.length > 0 ? { acceptMs: summary(accept) } : {}),
  };
}

/** Median over rounds of the p99 (one bad round should not decide it), and the worst stall of any. */
export function loopDelaySummary(delays: Array<EventLoopDelay | undefined>): { p99Ms: number; maxMs: number } | undefined {
  const known = delays.filter((delay): delay is EventLoopDelay => delay !== undefined);
  if (known.length === 0) return undefined;
  return { p99Ms: round(median(known.map((delay) => delay.p99Ms))), maxMs: round(Math.max(...known.map((delay) => delay.maxMs))) };
}

/**
 * One level's result. The latencies are pooled over rounds, but the ratios are taken within each
 * round first: bot and bare ran back to back there, under the same background noise.
 */
export function levelResult(options: { concurrency: number; rounds: RoundSample[] }): LevelResult {
  const { concurrency, rounds } = options;
  const pooled = (pick: (round: RoundSample) => LoadResult): LatencySummary =>
    summarize(
      rounds.flatMap((round) => pick(round).latenciesMs),
      rounds.flatMap((round) => pick(round).statuses),
    );
  const bot = pooled((round) => round.bot);
  const bare = pooled((round) => round.bare);
  const perRound = rounds.map((round) => ({
    bot: summarize(round.bot.latenciesMs, round.bot.statuses),
    bare: summarize(round.bare.latenciesMs, round.bare.statuses),
  }));
  // Both ratios per round, then the median over rounds: a ratio of medians would divide rounds that
  // did not run under the same noise.
  const roundRatiosP50 = perRound.map((round) => ratio(round.bot.p50, round.bare.p50));
  const roundRatiosP99 = perRound.map((round) => ratio(round.bot.p99, round.bare.p99));
  const noiseRatiosP99 = rounds.map((sample) => ratio(summarize(sample.bareAgain.latenciesMs, sample.bareAgain.statuses).p99, summarize(sample.bare.latenciesMs, sample.bare.statuses).p99));
  return {
    concurrency,
    rounds: rounds.length,
    bot,
    bare,
    ratioP50: round(median(roundRatiosP50)),
    roundRatiosP50,
    ratioP99: round(median(roundRatiosP99)),
    roundRatiosP99,
    noiseFloor: { ratioP99: round(median(noiseRatiosP99)), roundRatiosP99: noiseRatiosP99 },
    pooledRatioP99: ratio(bot.p99, bare.p99),
    botCpuMsPerRequest: round(rounds.reduce((sum, sample) => sum + sample.botCpuMs, 0) / Math.max(1, bot.requests)),
    bareCpuMsPerRequest: round(rounds.reduce((sum, sample) => sum + sample.bareCpuMs, 0) / Math.max(1, bare.requests)),
    ...insideViews(rounds),
    ...chatSdkView(rounds),
  };
}

/** The Chat SDK bot against the same round's bare app, when every round ran it. */
function chatSdkView(rounds: RoundSample[]): Pick<LevelResult, 'chatSdk'> {
  if (rounds.length === 0 || rounds.some((sample) => sample.chat === undefined)) return {};
  const chatRounds = rounds as Array<RoundSample & { chat: LoadResult }>;
  const latency = summarize(
    chatRounds.flatMap((sample) => sample.chat.latenciesMs),
    chatRounds.flatMap((sample) => sample.chat.statuses),
  );
  const roundRatiosP99 = chatRounds.map((sample) => ratio(summarize(sample.chat.latenciesMs, sample.chat.statuses).p99, summarize(sample.bare.latenciesMs, sample.bare.statuses).p99));
  const botOverChat = chatRounds.map((sample) => ratio(summarize(sample.bot.latenciesMs, sample.bot.statuses).p99, summarize(sample.chat.latenciesMs, sample.chat.statuses).p99));
  return {
    chatSdk: {
      latency,
      ratioP99: round(median(roundRatiosP99)),
      roundRatiosP99,
      botOverChatP99: round(median(botOverChat)),
      cpuMsPerRequest: round(chatRounds.reduce((sum, sample) => sum + (sample.chatCpuMs ?? 0), 0) / Math.max(1, latency.requests)),
    },
  };
}

/** "median (min–max)" of per-round ratios: the spread a reader needs to trust one number. */
export function ratioSpread(ratios: readonly number[]): string {
  if (ratios.length === 0) return 'n/a';
  return `${round(median(ratios))} (${Math.min(...ratios)}–${Math.max(...ratios)})`;
}

/** The views from inside each process, present only when the rounds were observed over the inspector. */
function insideViews(rounds: RoundSample[]): Pick<LevelResult, 'ackBreakdown' | 'eventLoopDelay'> {
  return {
    ...(rounds.some((sample) => sample.botBreakdown)
      ? {
          ackBreakdown: {
            bot: breakdownSummary(rounds.map((sample) => sample.botBreakdown))!,
            bare: breakdownSummary(rounds.map((sample) => sample.bareBreakdown))!,
          },
        }
      : {}),
    ...(rounds.some((sample) => sample.botLoopDelay)
      ? {
          eventLoopDelay: {
            bot: loopDelaySummary(rounds.map((sample) => sample.botLoopDelay))!,
            bare: loopDelaySummary(rounds.map((sample) => sample.bareLoopDelay))!,
          },
        }
      : {}),
  };
}

/** One log line per level, with the per-round ratios so a noisy round shows. */
export function describeLevel(level: LevelResult): string {
  const chat = level.chatSdk ? ` | Chat SDK p99 ${level.chatSdk.latency.p99} ms, ÷ bare per round ${level.chatSdk.roundRatiosP99.join(', ')} (median ${level.chatSdk.ratioP99})` : '';
  return `bot p50 ${level.bot.p50} ms p99 ${level.bot.p99} ms | bare p50 ${level.bare.p50} ms p99 ${level.bare.p99} ms | p99 ratio per round ${level.roundRatiosP99.join(', ')} (median ${level.ratioP99}) | bare ÷ bare per round ${level.noiseFloor.roundRatiosP99.join(', ')} (median ${level.noiseFloor.ratioP99})${chat}`;
}
