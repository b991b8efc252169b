import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { formatResults, writeResults } from '../bench/lib/report.js';
import { numericLeaves, type BenchResults } from '../bench/lib/results.js';
import { runBenchmark } from '../bench/lib/run-benchmark.js';
import { SCALES } from '../bench/lib/scale.js';

/**
 * The benchmark at a tiny scale, so `npm run bench` keeps working. It checks that every metric is
 * produced and finite, never how fast anything is.
 */
it('runs the benchmark end to end at smoke scale and reports every metric', async () => {
  const results = await runBenchmark({ scale: SCALES.smoke });

  expect(results.ackLatency.mention.map((level) => level.concurrency)).toEqual(SCALES.smoke.levels);
  expect(results.ackLatency.click.map((level) => level.concurrency)).toEqual(SCALES.smoke.levels);
  expect(results.ackLatency.repeatClick.map((level) => level.concurrency)).toEqual(SCALES.smoke.levels);
  for (const level of [...results.ackLatency.mention, ...results.ackLatency.click, ...results.ackLatency.repeatClick]) {
    expect(level.bot.requests).toBe((SCALES.smoke.requestsPerLevel[level.concurrency] ?? 0) * SCALES.smoke.rounds);
    expect(level.roundRatiosP50).toHaveLength(SCALES.smoke.rounds);
    expect(level.roundRatiosP99).toHaveLength(SCALES.smoke.rounds);
    expect(level.noiseFloor.roundRatiosP99).toHaveLength(SCALES.smoke.rounds);
    expect(level.bot.errors + level.bare.errors).toBe(0);
  }
  expect(results.rss.points.map((point) => point.pending)).toEqual(SCALES.smoke.pendingTargets);
  expect(results.redis.memory.pendingSteps).toBe(SCALES.smoke.pendingTargets.at(-1));
  expect(results.redis.memory.historyStoredOncePerThread).toBe(true);
  expect(results.redis.perTurn.requests).toBe(SCALES.smoke.accounting.turns);
  expect(results.redis.perClick.requests).toBe(SCALES.smoke.accounting.clicks);
  expect(results.targets.length).toBeGreaterThanOrEqual(9);
  // Every approved click of every phase answered once: none twice (and none never, or the run had failed).
  expect(results.resumedAnswers.threads).toBeGreaterThan(0);
  expect(results.resumedAnswers.answeredMoreThanOnce).toBe(0);
  // And no approved call started or finished twice in any bot's audit trail, read once every Redis had settled.
  expect(results.approvedCalls).toMatchObject({ startedMoreThanOnce: 0, finishedMoreThanOnce: 0, unsettledRedises: 0 });
  expect(results.approvedCalls.calls).toBe(results.resumedAnswers.threads);
  expect(results.twoProcessApprovals).toMatchObject({ threads: SCALES.smoke.twoProcessApprovals.threads, turnRunners: 2, ackErrors: 0 });
  // The second baseline ran in every round of mentions and first clicks.
  for (const level of [...results.ackLatency.mention, ...results.ackLatency.click]) expect(level.chatSdk?.roundRatiosP99).toHaveLength(SCALES.smoke.rounds);
  expect(results.openLoop.map((level) => [level.kind, level.ratePerSecond])).toEqual(SCALES.smoke.openLoop.rates.flatMap((rate) => [['mention', rate], ['click', rate]]));
  expect(results.historySweep.map((point) => point.exchanges)).toEqual(SCALES.smoke.historySweep.exchanges);
  expect(results.clickEndToEnd.map((level) => level.clicks)).toEqual(SCALES.smoke.levels.map((level) => (SCALES.smoke.requestsPerLevel[level] ?? 0) * SCALES.smoke.rounds));
  // Each lane's first click (the lanes' simultaneous start) is reported apart, not counted.
  const { lanes, clicksPerLane, rounds } = SCALES.smoke.closedLoop;
  expect(results.closedLoopClicks.clicks).toBe(lanes * (clicksPerLane - 1) * rounds);
  expect(results.closedLoopClicks.p99PerRound).toHaveLength(rounds);
  expect(results.closedLoopClicksSlowModel.clicks).toBe(lanes * (clicksPerLane - 1) * SCALES.smoke.closedLoop.slowModelRounds);
  // Every counted click in one bucket of each stage's histogram.
  for (const loop of [results.closedLoopClicks, results.closedLoopClicksSlowModel]) {
    for (const buckets of [loop.histograms.ackedMs, loop.histograms.cardUpdatedMs, loop.histograms.toolStartedMs, loop.histograms.answeredMs]) {
      expect(buckets.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(loop.clicks);
    }
  }
  expect(results.turnThroughput.runs.map((run) => [run.deployment, run.workers, run.turns])).toEqual([
    ['all-in-one', 1, SCALES.smoke.turnThroughput.turns],
    ...SCALES.smoke.turnThroughput.workerCounts.map((workers) => ['receiver + workers', workers, SCALES.smoke.turnThroughput.turns]),
  ]);
  for (const run of results.turnThroughput.runs) expect(run.roundTurnsPerSecond).toHaveLength(SCALES.smoke.turnThroughput.rounds);

  const leaves = numericLeaves(results);
  const notFinite = leaves.filter((leaf) => !Number.isFinite(leaf.value)).map((leaf) => leaf.path);
  expect(notFinite).toEqual([]);
  for (const path of [
    'throughput.decisionsPerSecond',
    'redis.perClick.decisionRoundTrips',
    'redis.perClick.roundTrips',
    'redis.perTurn.roundTrips',
    'redis.perTurn.serverCommands',
    'redis.memory.bytesPerPendingApproval',
    'redis.memory.historyBytesPerThread',
    'cpu.msPerTurn',
    'turnThroughput.runs[0].turnsPerSecond',
    'closedLoopClicks.answeredMs.p50',
    'closedLoopClicks.toolStartedMs.p50',
    'closedLoopClicksSlowModel.answeredMs.p50',
    'closedLoopClicks.firstWaveMaxMs',
    'openLoop[1].answeredMs.p99',
    'historySweep[1].resumeBytesWritten',
    'historySweep[1].historyBytes',
  ]) {
    expect(leaves.find((leaf) => leaf.path === path)?.value, path).toBeGreaterThan(0);
  }

  const output = join(mkdtempSync(join(tmpdir(), 'countersign-bench-smoke-')), 'results.json');
  writeResults(results, output);
  expect((JSON.parse(readFileSync(output, 'utf8')) as BenchResults).scale).toBe('smoke');
  expect(formatResults(results)).toContain('Targets');
}, 300_000);
