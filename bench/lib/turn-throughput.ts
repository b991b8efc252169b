import { startRedisServer } from '../../test/helpers/redis-server.js';
import type { BenchContext } from './bench-context.js';
import { cpuMs } from './processes.js';
import type { BenchResults } from './results.js';
import type { BenchScale } from './scale.js';
import { round } from './stats.js';
import { mentionRequest, SLOW_MODEL_MS } from './workload.js';

/**
 * Turns per second with a model that takes 500 ms, for one and for two worker processes behind a
 * receiver, each set on a Redis of its own. The mentions are sent far faster than any worker can
 * answer them (acks are the receiver's), so what is measured is how many turns the workers carry
 * at once: their CPU, not a cap, should be the limit.
 */
export async function measureTurnThroughput(options: { context: BenchContext; scale: BenchScale }): Promise<BenchResults['turnThroughput']> {
  const { context, scale } = options;
  const runs: BenchResults['turnThroughput']['runs'] = [];
  for (const workers of scale.turnThroughput.workerCounts) {
    const redis = await startRedisServer();
    context.cleanup.push(() => redis.stop());
    const { receiver, workers: started } = await context.startSplitBot({ name: `throughput-${workers}`, redisUrl: redis.url, workers });
    const threads = context.newThreads(scale.turnThroughput.turns);
    const cpuBefore = started.map((worker) => cpuMs(worker.handle.pid));
    context.modelActivity.peakInFlight = context.modelActivity.inFlight;
    const startedAt = Date.now();
    await context.send({ url: receiver.eventsUrl, concurrency: scale.turnThroughput.concurrency, requests: threads.map((thread) => mentionRequest(thread, 'slow-text')) });
    await context.waitForTurns({ threads, mode: 'slow-text' });
    const wallMs = Date.now() - startedAt;
    const workerCpuMs = started.reduce((total, worker, index) => total + cpuMs(worker.handle.pid) - (cpuBefore[index] ?? 0), 0);
    runs.push({
      workers,
      turns: threads.length,
      wallMs,
      turnsPerSecond: round((threads.length * 1000) / wallMs, 1),
      peakConcurrentModelCalls: context.modelActivity.peakInFlight,
      workerCpuMsPerTurn: round(workerCpuMs / threads.length, 2),
    });
    context.log(`[bench]   ${workers} worker${workers > 1 ? 's' : ''}: ${runs.at(-1)?.turnsPerSecond} turns/s, at most ${runs.at(-1)?.peakConcurrentModelCalls} model calls at once, ${runs.at(-1)?.workerCpuMsPerTurn} worker CPU ms per turn`);
    for (const server of [receiver, ...started]) await server.handle.stop();
  }
  const one = runs.find((run) => run.workers === 1);
  const two = runs.find((run) => run.workers === 2);
  return { modelMs: SLOW_MODEL_MS, runs, ...(one && two ? { twoWorkersOverOne: round(two.turnsPerSecond / one.turnsPerSecond, 2) } : {}) };
}
