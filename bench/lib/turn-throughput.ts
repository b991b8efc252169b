import { startRedisServer } from '../../test/helpers/redis-server.js';
import type { BenchContext, ServerUnderTest } from './bench-context.js';
import { cpuMs } from './processes.js';
import type { BenchResults } from './results.js';
import type { BenchScale } from './scale.js';
import { round } from './stats.js';
import { mentionRequest, SLOW_MODEL_MS } from './workload.js';

type ThroughputRun = BenchResults['turnThroughput']['runs'][number];

/**
 * Turns per second with a model that takes 500 ms: one all-in-one process (the default deployment),
 * then one and two worker processes behind a receiver, each set on a Redis of its own. The mentions
 * are sent far faster than the turns can finish (acks come first), so what is measured is how many
 * turns a process carries at once: its CPU, not a cap, should be the limit.
 */
export async function measureTurnThroughput(options: { context: BenchContext; scale: BenchScale }): Promise<BenchResults['turnThroughput']> {
  const { context, scale } = options;
  const runs: ThroughputRun[] = [];
  const freshRedis = async () => {
    const redis = await startRedisServer();
    context.cleanup.push(() => redis.stop());
    return redis;
  };
  const allInOne = await context.startAllInOneBot({ name: 'throughput-all-in-one', redisUrl: (await freshRedis()).url });
  runs.push(await measureRun({ context, scale, deployment: 'all-in-one', eventsUrl: allInOne.eventsUrl, turnRunners: [allInOne] }));
  await allInOne.handle.stop();
  for (const workers of scale.turnThroughput.workerCounts) {
    const { receiver, workers: started } = await context.startSplitBot({ name: `throughput-${workers}`, redisUrl: (await freshRedis()).url, workers });
    runs.push(await measureRun({ context, scale, deployment: 'receiver + workers', eventsUrl: receiver.eventsUrl, turnRunners: started }));
    for (const server of [receiver, ...started]) await server.handle.stop();
  }
  const one = runs.find((run) => run.deployment === 'receiver + workers' && run.workers === 1);
  const two = runs.find((run) => run.deployment === 'receiver + workers' && run.workers === 2);
  return { modelMs: SLOW_MODEL_MS, runs, ...(one && two ? { twoWorkersOverOne: round(two.turnsPerSecond / one.turnsPerSecond, 2) } : {}) };
}

async function measureRun(options: {
  context: BenchContext;
  scale: BenchScale;
  deployment: ThroughputRun['deployment'];
  eventsUrl: string;
  /** The processes that run the turns, whose CPU is counted. */
  turnRunners: ServerUnderTest[];
}): Promise<ThroughputRun> {
  const { context, scale, turnRunners } = options;
  const threads = context.newThreads(scale.turnThroughput.turns);
  const cpuBefore = turnRunners.map((runner) => cpuMs(runner.handle.pid));
  context.modelActivity.peakInFlight = context.modelActivity.inFlight;
  const startedAt = Date.now();
  await context.send({ url: options.eventsUrl, concurrency: scale.turnThroughput.concurrency, requests: threads.map((thread) => mentionRequest(thread, 'slow-text')) });
  await context.waitForTurns({ threads, mode: 'slow-text' });
  const wallMs = Date.now() - startedAt;
  const cpuSpent = turnRunners.reduce((total, runner, index) => total + cpuMs(runner.handle.pid) - (cpuBefore[index] ?? 0), 0);
  const run: ThroughputRun = {
    deployment: options.deployment,
    workers: turnRunners.length,
    turns: threads.length,
    wallMs,
    turnsPerSecond: round((threads.length * 1000) / wallMs, 1),
    peakConcurrentModelCalls: context.modelActivity.peakInFlight,
    workerCpuMsPerTurn: round(cpuSpent / threads.length, 2),
  };
  const who = options.deployment === 'all-in-one' ? 'all-in-one process' : `receiver + ${run.workers} worker${run.workers > 1 ? 's' : ''}`;
  context.log(`[bench]   ${who}: ${run.turnsPerSecond} turns/s, at most ${run.peakConcurrentModelCalls} model calls at once, ${run.workerCpuMsPerTurn} CPU ms per turn`);
  return run;
}
