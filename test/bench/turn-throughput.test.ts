import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { ProcessReadings } from '../../bench/lib/process-readings.js';
import { SCALES } from '../../bench/lib/scale.js';
import { measureTurnThroughput } from '../../bench/lib/turn-throughput.js';
import { createThreadFactory } from '../../bench/lib/workload.js';

/** No /proc: the fake processes use no CPU and are always idle. */
const readings: ProcessReadings = {
  cpuMs: () => 0,
  waitForCpuIdle: async () => {},
  settledRss: async () => 0,
  heapAfterGc: async () => ({ heapUsedBytes: 0, heapTotalBytes: 0, externalBytes: 0, arrayBuffersBytes: 0, rssBytes: 0 }),
};

/** Warm turns per second of each deployment, and what a fresh process's first batch costs on top. */
const WARM_RATE: Record<string, number> = { 'all-in-one': 300, 'one-worker': 200, 'two-workers': 400 };
const COLD_PENALTY_MS = 5_000;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * A fake context whose deployments answer `WARM_RATE` turns per second, except each one's first batch,
 * which also pays `COLD_PENALTY_MS` (JIT compilation, heap growth): Date.now() moves only in waitForTurns.
 */
function fakeContext() {
  const batches: Array<{ deployment: string; turns: number }> = [];
  const seen = new Set<string>();
  let pending: { deployment: string; turns: number } | undefined;
  // This process's pid: a real one, in case anything reads /proc for it.
  const server = (name: string) => ({ handle: { pid: process.pid, stop: async () => {} }, eventsUrl: `http://${name}/slack/events` });
  const context = {
    startRedis: async () => ({ url: 'redis://127.0.0.1:1', port: 1 }),
    log: () => {},
    newThreads: createThreadFactory('T'),
    modelActivity: { inFlight: 0, peakInFlight: 0 },
    startAllInOneBot: async () => server('all-in-one'),
    startSplitBot: async ({ workers }: { workers: number }) => {
      const name = workers === 1 ? 'one-worker' : 'two-workers';
      return { receiver: server(name), workers: Array.from({ length: workers }, () => server(`${name}-worker`)) };
    },
    send: async ({ url, requests }: { url: string; requests: unknown[] }) => {
      pending = { deployment: new URL(url).host, turns: requests.length };
      return { latenciesMs: [], sentAtMs: [], statuses: [], startedAt: 0, wallMs: 0 };
    },
    waitForTurns: async () => {
      const batch = pending!;
      batches.push(batch);
      context.modelActivity.peakInFlight = 150;
      const cold = seen.has(batch.deployment) ? 0 : COLD_PENALTY_MS;
      seen.add(batch.deployment);
      vi.setSystemTime(Date.now() + cold + (batch.turns * 1000) / (WARM_RATE[batch.deployment] ?? 1));
    },
  };
  return { context, batches };
}

it('turn throughput leaves each process\'s cold first batch out, and measures rounds in a rotating order', async () => {
  const { context, batches } = fakeContext();
  const scale = { ...SCALES.full, turnThroughput: { turns: 2_000, concurrency: 200, workerCounts: [1, 2], rounds: 3, warmUpTurns: 1_000 } };
  const result = await measureTurnThroughput({ context: context as never, scale, readings });

  // The reviewer's probe: 75 turns/s on a fresh process, 166 on the same process warm. The figure is the warm one.
  expect(result.runs.map((run) => run.turnsPerSecond)).toEqual([300, 200, 400]);
  expect(result.runs.map((run) => run.roundTurnsPerSecond)).toEqual([
    [300, 300, 300],
    [200, 200, 200],
    [400, 400, 400],
  ]);
  expect(result.twoWorkersOverOne).toBe(2);
  // A warm-up batch to each deployment, then each round once to each, starting one further along each round.
  expect(batches.map((batch) => `${batch.deployment} ${batch.turns}`)).toEqual([
    'all-in-one 1000',
    'one-worker 1000',
    'two-workers 1000',
    ...['all-in-one', 'one-worker', 'two-workers', 'one-worker', 'two-workers', 'all-in-one', 'two-workers', 'all-in-one', 'one-worker'].map((deployment) => `${deployment} 2000`),
  ]);
});
