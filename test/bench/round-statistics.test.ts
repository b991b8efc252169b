import { expect, it } from 'vitest';
import { levelResult, type RoundSample } from '../../bench/lib/round-statistics.js';

const burst = (latenciesMs: number[]) => ({ latenciesMs, sentAtMs: latenciesMs.map(() => 0), statuses: latenciesMs.map(() => 200), startedAt: 0, wallMs: 1 });
const round = (bot: number, bare: number): RoundSample => ({
  bot: burst([bot, bot, bot]),
  bare: burst([bare, bare, bare]),
  bareAgain: burst([bare, bare, bare]),
  botCpuMs: 0,
  bareCpuMs: 0,
  botLoopDelay: undefined,
  bareLoopDelay: undefined,
  botBreakdown: undefined,
  bareBreakdown: undefined,
});

/**
 * The report's heading says "ratios are per round, shown as median (min–max) over rounds": bot and
 * bare ran back to back within a round, under the same noise. The p50 ratio was the median of the
 * bot's p50s over the median of the bare app's (a ratio of medians, across rounds).
 */
it('the p50 ratio is the median of the per-round ratios, as the p99 ratio is', () => {
  // Per round bot ÷ bare: 10, 1, 1 → median 1. A ratio of medians: median(10, 2, 3) ÷ median(1, 2, 3) = 1.5.
  const level = levelResult({ concurrency: 1, rounds: [round(10, 1), round(2, 2), round(3, 3)] });
  expect(level.ratioP99).toBe(1);
  expect(level.ratioP50).toBe(1);
  expect(level.roundRatiosP50).toEqual([10, 1, 1]);
});
