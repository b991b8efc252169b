import type { BenchContext, ServerUnderTest } from './bench-context.js';
import { allStarted } from './cleanup-stack.js';
import { PROC_READINGS, type ProcessReadings } from './process-readings.js';
import type { BenchResults } from './results.js';
import type { BenchScale } from './scale.js';
import { median, ratio, round } from './stats.js';
import { mentionRequest, SLOW_MODEL_MS } from './workload.js';

type ThroughputRun = BenchResults['turnThroughput']['runs'][number];

/** One deployment under test: where mentions go, and the processes that run its turns. */
interface Deployment {
  deployment: ThroughputRun['deployment'];
  label: string;
  eventsUrl: string;
  /** The processes that run the turns, whose CPU is counted. */
  turnRunners: ServerUnderTest[];
  /** Every process of the deployment (the receiver too), waited on until idle after each batch. */
  processes: ServerUnderTest[];
}

/** One measured batch on one deployment. */
interface ThroughputSample {
  wallMs: number;
  turnsPerSecond: number;
  peakConcurrentModelCalls: number;
  cpuMsPerTurn: number;
}

/**
 * Turns per second with a model that takes 500 ms: one all-in-one process (the default deployment),
 * and a receiver with one and with two worker processes, each set on a Redis of its own. The mentions
 * are sent far faster than the turns can finish (acks come first), so what is measured is how many
 * turns a process carries at once: its CPU, not a cap, should be the limit.
 *
 * Every deployment is started and sent a warm-up batch that is not measured: a fresh process spends
 * its first batch compiling and growing its heap (a reviewer's probe: 75 turns/s fresh, 166 on the
 * same process warm), which the figures, and two workers ÷ one, would otherwise carry. Then each
 * round measures every deployment once, in an order that rotates from round to round so that none
 * always runs first or after the same neighbour; the figures are medians over the rounds, and two
 * workers ÷ one is taken within each round (the two ran under the same background noise).
 */
export async function measureTurnThroughput(options: { context: BenchContext; scale: BenchScale; readings?: ProcessReadings }): Promise<BenchResults['turnThroughput']> {
  const { context, scale } = options;
  const readings = options.readings ?? PROC_READINGS;
  const { rounds, warmUpTurns } = scale.turnThroughput;
  const deployments = await startDeployments(options);
  for (const deployment of deployments) {
    await runBatch({ context, scale, readings, deployment, turns: warmUpTurns });
    context.log(`[bench]   ${deployment.label}: warmed up with ${warmUpTurns} turns (not measured)`);
  }
  const samples = new Map<Deployment, ThroughputSample[]>(deployments.map((deployment) => [deployment, []]));
  for (let roundIndex = 0; roundIndex < rounds; roundIndex += 1) {
    for (let index = 0; index < deployments.length; index += 1) {
      const deployment = deployments[(roundIndex + index) % deployments.length]!;
      const sample = await runBatch({ context, scale, readings, deployment, turns: scale.turnThroughput.turns });
      samples.get(deployment)?.push(sample);
      context.log(
        `[bench]   round ${roundIndex + 1}, ${deployment.label}: ${sample.turnsPerSecond} turns/s, at most ${sample.peakConcurrentModelCalls} model calls at once, ${sample.cpuMsPerTurn} CPU ms per turn`,
      );
    }
  }
  for (const deployment of deployments) for (const server of deployment.processes) await server.handle.stop();
  const runs = deployments.map((deployment) => summarizeRun({ deployment, samples: samples.get(deployment) ?? [], turns: scale.turnThroughput.turns }));
  return { modelMs: SLOW_MODEL_MS, runs, ...twoOverOne(deployments, samples) };
}

/**
 * The all-in-one process and a receiver with each count of workers, each on a fresh Redis of its own,
 * started side by side (each is warmed up before anything is measured).
 */
async function startDeployments(options: { context: BenchContext; scale: BenchScale }): Promise<Deployment[]> {
  const { context, scale } = options;
  const startAllInOne = async (): Promise<Deployment> => {
    const allInOne = await context.startAllInOneBot({ name: 'throughput-all-in-one', redisUrl: (await context.startRedis()).url });
    return { deployment: 'all-in-one', label: 'all-in-one process', eventsUrl: allInOne.eventsUrl, turnRunners: [allInOne], processes: [allInOne] };
  };
  const startSplit = async (workers: number): Promise<Deployment> => {
    const { receiver, workers: started } = await context.startSplitBot({ name: `throughput-${workers}`, redisUrl: (await context.startRedis()).url, workers });
    return {
      deployment: 'receiver + workers',
      label: `receiver + ${workers} worker${workers > 1 ? 's' : ''}`,
      eventsUrl: receiver.eventsUrl,
      turnRunners: started,
      processes: [receiver, ...started],
    };
  };
  return allStarted([startAllInOne(), ...scale.turnThroughput.workerCounts.map(startSplit)]);
}

/**
 * One batch of slow-text mentions: turns per second from the first mention to the last answer, and the
 * CPU of the processes that ran the turns once every process of the deployment is idle again (so the
 * work the turns left behind is counted, and none of it runs into the next batch).
 */
async function runBatch(options: { context: BenchContext; scale: BenchScale; readings: ProcessReadings; deployment: Deployment; turns: number }): Promise<ThroughputSample> {
  const { context, deployment, readings } = options;
  const threads = context.newThreads(options.turns);
  const cpuBefore = deployment.turnRunners.map((runner) => readings.cpuMs(runner.handle.pid));
  context.modelActivity.peakInFlight = context.modelActivity.inFlight;
  const startedAt = Date.now();
  await context.send({ url: deployment.eventsUrl, concurrency: options.scale.turnThroughput.concurrency, requests: threads.map((thread) => mentionRequest(thread, 'slow-text')) });
  await context.waitForTurns({ threads, mode: 'slow-text' });
  const wallMs = Date.now() - startedAt;
  const peakConcurrentModelCalls = context.modelActivity.peakInFlight;
  await readings.waitForCpuIdle(
    deployment.processes.map((server) => server.handle.pid),
    { windowMs: options.scale.idleWindowMs },
  );
  const cpuSpent = deployment.turnRunners.reduce((total, runner, index) => total + readings.cpuMs(runner.handle.pid) - (cpuBefore[index] ?? 0), 0);
  return {
    wallMs,
    turnsPerSecond: round((threads.length * 1000) / wallMs, 1),
    peakConcurrentModelCalls,
    cpuMsPerTurn: round(cpuSpent / Math.max(1, threads.length), 2),
  };
}

/** A deployment's rounds as medians, with each round's turns per second for the spread. */
function summarizeRun(options: { deployment: Deployment; samples: ThroughputSample[]; turns: number }): ThroughputRun {
  const { deployment, samples } = options;
  return {
    deployment: deployment.deployment,
    workers: deployment.turnRunners.length,
    turns: options.turns,
    rounds: samples.length,
    wallMs: round(median(samples.map((sample) => sample.wallMs)), 0),
    turnsPerSecond: round(median(samples.map((sample) => sample.turnsPerSecond)), 1),
    roundTurnsPerSecond: samples.map((sample) => sample.turnsPerSecond),
    peakConcurrentModelCalls: median(samples.map((sample) => sample.peakConcurrentModelCalls)),
    workerCpuMsPerTurn: round(median(samples.map((sample) => sample.cpuMsPerTurn)), 2),
  };
}

/** Two workers ÷ one, per round (the two ran in the same round) and the median over rounds; with both counts only. */
function twoOverOne(deployments: Deployment[], samples: Map<Deployment, ThroughputSample[]>): Pick<BenchResults['turnThroughput'], 'twoWorkersOverOne' | 'roundTwoWorkersOverOne'> {
  const withWorkers = (count: number) => deployments.find((deployment) => deployment.deployment === 'receiver + workers' && deployment.turnRunners.length === count);
  const one = withWorkers(1);
  const two = withWorkers(2);
  if (!one || !two) return {};
  const oneRounds = samples.get(one) ?? [];
  const perRound = (samples.get(two) ?? []).map((sample, index) => ratio(sample.turnsPerSecond, oneRounds[index]?.turnsPerSecond ?? Number.NaN));
  return { twoWorkersOverOne: round(median(perRound)), roundTwoWorkersOverOne: perRound };
}
