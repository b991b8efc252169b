import { performance } from 'node:perf_hooks';
import type { BenchContext } from './bench-context.js';
import { PROC_READINGS, type ProcessReadings } from './process-readings.js';
import { countPendingSteps } from './redis-memory.js';
import { usedMemory } from './redis-inspect.js';
import type { RssPoint } from './results.js';
import type { BenchScale } from './scale.js';
import type { Thread } from './workload.js';

export interface PendingApprovalsMeasurement {
  rssPoints: RssPoint[];
  /**
   * The mention turns that created the pending approvals: how many, wall time, and the CPU of every
   * process of the bot (`cpuMs`; `processes` says which) and of each (`cpuMsByProcess`, by label).
   */
  creation: { turns: number; cpuMs: number; wallMs: number; processes: string; cpuMsByProcess: Record<string, number> };
  /** Whose RSS the points are: the process that runs the turns (all-in-one, or the worker with BENCH_ROLES=split). */
  rssProcess: string;
  /** Redis `used_memory` at the 0 point and at the last point, for the all-in bytes per pending approval. */
  usedMemoryAtZero: number;
  usedMemoryAtMax: number;
  /** The threads whose cards are still pending (never clicked), in creation order. */
  pendingThreads: Thread[];
}

interface PhaseOptions {
  context: BenchContext;
  scale: BenchScale;
  readings: ProcessReadings;
}

/**
 * Grows the number of pending approvals through each target in turn (by real mentions, so the state
 * is what production would hold) and samples, at each, the RSS of the process that runs the turns
 * (with BENCH_ROLES=split the worker: the receiver runs none): retained state shows as growth.
 */
export async function measurePendingApprovals(phaseOptions: { context: BenchContext; scale: BenchScale; readings?: ProcessReadings }): Promise<PendingApprovalsMeasurement> {
  const options: PhaseOptions = { ...phaseOptions, readings: phaseOptions.readings ?? PROC_READINGS };
  const { context, scale, readings } = options;
  const { measuredBot } = context;
  const measurement: PendingApprovalsMeasurement = {
    rssPoints: [],
    creation: { turns: 0, cpuMs: 0, wallMs: 0, processes: measuredBot.label, cpuMsByProcess: {} },
    rssProcess: measuredBot.turnRunner.label,
    usedMemoryAtZero: Number.NaN,
    usedMemoryAtMax: Number.NaN,
    pendingThreads: [],
  };
  for (const target of [...scale.pendingTargets].sort((left, right) => left - right)) {
    while (measurement.pendingThreads.length < target) await createPendingBatch({ ...options, target, measurement });
    if (target === 0) {
      // The same load as each creation batch, answered with text: every RSS point then follows
      // an identical burst, so the garbage collector's high-water mark is comparable.
      await context.mentionBurst({ threads: context.newThreads(scale.creation.batch), mode: 'text', concurrency: scale.creation.concurrency });
      await readings.waitForCpuIdle(botPids(context), { windowMs: 200 });
    }
    await recordRssPoint({ ...options, target, measurement });
  }
  return measurement;
}

const botPids = (context: BenchContext) => context.measuredBot.processes.map((server) => server.handle.pid);

/** Which of the bot's processes a CPU reading is: `receiver` and `worker`, or the one all-in-one process. */
const processLabel = (context: BenchContext, index: number) => (context.measuredBot.processes.length === 1 ? 'all-in-one' : index === 0 ? 'receiver' : `worker${index > 1 ? ` ${index}` : ''}`);

/**
 * One batch of mentions that each leave a pending card, timed for the CPU-per-turn figure: the CPU of
 * every process of the bot (with BENCH_ROLES=split the receiver's hand-off and the worker's turn), until
 * all of them are idle.
 */
async function createPendingBatch(options: PhaseOptions & { target: number; measurement: PendingApprovalsMeasurement }): Promise<void> {
  const { context, scale, measurement, readings } = options;
  const pids = botPids(context);
  const threads = context.newThreads(Math.min(scale.creation.batch, options.target - measurement.pendingThreads.length));
  const cpuBefore = pids.map((pid) => readings.cpuMs(pid));
  const startedAt = performance.now();
  await context.mentionBurst({ threads, mode: 'card', concurrency: scale.creation.concurrency });
  await readings.waitForCpuIdle(pids, { windowMs: 200 });
  measurement.creation.wallMs += performance.now() - startedAt;
  pids.forEach((pid, index) => {
    const spent = readings.cpuMs(pid) - (cpuBefore[index] ?? 0);
    const label = processLabel(context, index);
    measurement.creation.cpuMs += spent;
    measurement.creation.cpuMsByProcess[label] = (measurement.creation.cpuMsByProcess[label] ?? 0) + spent;
  });
  measurement.creation.turns += threads.length;
  measurement.pendingThreads.push(...threads);
  context.log(`[bench]   ${measurement.pendingThreads.length} pending`);
}

/**
 * Checks Redis holds exactly the target's pending approvals (else the point would measure something
 * else), then samples the settled RSS of the process that runs the turns and, over its inspector, RSS
 * and heap after a forced full GC.
 */
async function recordRssPoint(options: PhaseOptions & { target: number; measurement: PendingApprovalsMeasurement }): Promise<void> {
  const { context, target, measurement, readings } = options;
  const { turnRunner } = context.measuredBot;
  const pendingInRedis = await countPendingSteps(context.redisInspector);
  if (pendingInRedis !== target) throw new Error(`expected ${target} pending approvals in Redis, found ${pendingInRedis}`);
  // The other processes idle too: a receiver still handing off would take the cores the sample waits on.
  await readings.waitForCpuIdle(botPids(context), { windowMs: options.scale.idleWindowMs });
  const rss = await readings.settledRss(turnRunner.server.handle.pid, { idleMs: options.scale.rssSettleMs, idleWindowMs: options.scale.idleWindowMs });
  const heap = turnRunner.inspectorUrl ? await readings.heapAfterGc(turnRunner.inspectorUrl) : undefined;
  measurement.rssPoints.push({
    pending: target,
    rssBytes: rss,
    ...(heap ? { afterFullGc: { rssBytes: heap.rssBytes, heapUsedBytes: heap.heapUsedBytes, heapTotalBytes: heap.heapTotalBytes, externalBytes: heap.externalBytes } } : {}),
  });
  if (target === 0) measurement.usedMemoryAtZero = await usedMemory(context.redisInspector);
  measurement.usedMemoryAtMax = await usedMemory(context.redisInspector);
  context.log(
    `[bench]   RSS of the ${turnRunner.label} at ${target} pending: ${(rss / 1048576).toFixed(1)} MiB${heap ? `; after a full GC: RSS ${(heap.rssBytes / 1048576).toFixed(1)} MiB, JS heap used ${(heap.heapUsedBytes / 1048576).toFixed(1)} MiB` : ''}`,
  );
}
