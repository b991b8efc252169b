import { performance } from 'node:perf_hooks';
import type { BenchContext } from './bench-context.js';
import { heapAfterGc } from './inspector.js';
import { cpuMs, settledRss, waitForCpuIdle } from './processes.js';
import { countPendingSteps } from './redis-memory.js';
import { usedMemory } from './redis-inspect.js';
import type { RssPoint } from './results.js';
import type { BenchScale } from './scale.js';
import type { Thread } from './workload.js';

export interface PendingApprovalsMeasurement {
  rssPoints: RssPoint[];
  /** The mention turns that created the pending approvals: how many, and the bot's CPU and wall time for them. */
  creation: { turns: number; cpuMs: number; wallMs: number };
  /** Redis `used_memory` at the 0 point and at the last point, for the all-in bytes per pending approval. */
  usedMemoryAtZero: number;
  usedMemoryAtMax: number;
  /** The threads whose cards are still pending (never clicked), in creation order. */
  pendingThreads: Thread[];
}

interface PhaseOptions {
  context: BenchContext;
  scale: BenchScale;
}

/**
 * Grows the number of pending approvals through each target in turn (by real mentions, so the state
 * is what production would hold) and samples the bot's RSS at each: retained state shows as growth.
 */
export async function measurePendingApprovals(options: PhaseOptions): Promise<PendingApprovalsMeasurement> {
  const { context, scale } = options;
  const measurement: PendingApprovalsMeasurement = {
    rssPoints: [],
    creation: { turns: 0, cpuMs: 0, wallMs: 0 },
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
      await waitForCpuIdle(context.bot.handle.pid, { windowMs: 200 });
    }
    await recordRssPoint({ ...options, target, measurement });
  }
  return measurement;
}

/** One batch of mentions that each leave a pending card, timed for the CPU-per-turn figure. */
async function createPendingBatch(options: PhaseOptions & { target: number; measurement: PendingApprovalsMeasurement }): Promise<void> {
  const { context, scale, measurement } = options;
  const { pid } = context.bot.handle;
  const threads = context.newThreads(Math.min(scale.creation.batch, options.target - measurement.pendingThreads.length));
  const cpuBefore = cpuMs(pid);
  const startedAt = performance.now();
  await context.mentionBurst({ threads, mode: 'card', concurrency: scale.creation.concurrency });
  await waitForCpuIdle(pid, { windowMs: 200 });
  measurement.creation.wallMs += performance.now() - startedAt;
  measurement.creation.cpuMs += cpuMs(pid) - cpuBefore;
  measurement.creation.turns += threads.length;
  measurement.pendingThreads.push(...threads);
  context.log(`[bench]   ${measurement.pendingThreads.length} pending`);
}

/**
 * Checks Redis holds exactly the target's pending approvals (else the point would measure something
 * else), then samples the settled RSS and, over the inspector, RSS and heap after a forced full GC.
 */
async function recordRssPoint(options: PhaseOptions & { target: number; measurement: PendingApprovalsMeasurement }): Promise<void> {
  const { context, target, measurement } = options;
  const pendingInRedis = await countPendingSteps(context.redisInspector);
  if (pendingInRedis !== target) throw new Error(`expected ${target} pending approvals in Redis, found ${pendingInRedis}`);
  const rss = await settledRss(context.bot.handle.pid, { idleMs: options.scale.rssSettleMs });
  const heap = context.botInspectorUrl ? await heapAfterGc(context.botInspectorUrl) : undefined;
  measurement.rssPoints.push({
    pending: target,
    rssBytes: rss,
    ...(heap ? { afterFullGc: { rssBytes: heap.rssBytes, heapUsedBytes: heap.heapUsedBytes, heapTotalBytes: heap.heapTotalBytes, externalBytes: heap.externalBytes } } : {}),
  });
  if (target === 0) measurement.usedMemoryAtZero = await usedMemory(context.redisInspector);
  measurement.usedMemoryAtMax = await usedMemory(context.redisInspector);
  context.log(
    `[bench]   RSS at ${target} pending: ${(rss / 1048576).toFixed(1)} MiB${heap ? `; after a full GC: RSS ${(heap.rssBytes / 1048576).toFixed(1)} MiB, JS heap used ${(heap.heapUsedBytes / 1048576).toFixed(1)} MiB` : ''}`,
  );
}
