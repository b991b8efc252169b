import { it } from 'vitest';
import { startBenchContext } from '../lib/bench-context.js';
import { createCleanupStack } from '../lib/cleanup-stack.js';
import { measurePendingApprovals } from '../lib/pending-approvals.js';
import { createPhaseTimer } from '../lib/phase-timer.js';
import { scaleFromEnvironment } from '../lib/scale.js';

/**
 * The benchmark's RSS phase alone: pending approvals grown to each of BENCH_PENDING (default the full
 * run's 0, 1,000, 10,000), the settled RSS and, after a forced full GC, RSS and JS heap at each; for
 * A/B runs of a memory setting (`BENCH_BOT_ENV=MALLOC_ARENA_MAX=2`, `BENCH_NODE_FLAGS=…`).
 */
it('measures the RSS as pending approvals grow', async () => {
  const scale = scaleFromEnvironment();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const cleanup = createCleanupStack();
  try {
    const context = await startBenchContext({ inspect: true, cleanup, phase: createPhaseTimer(() => {}).phase, log });
    const { rssPoints, rssProcess } = await measurePendingApprovals({ context, scale });
    log(`[probe] RSS of the bot's ${rssProcess}`);
    const [first] = rssPoints;
    const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
    for (const point of rssPoints) {
      const afterGc = point.afterFullGc;
      const ratio = afterGc && first?.afterFullGc ? (afterGc.rssBytes / first.afterFullGc.rssBytes).toFixed(3) : '-';
      log(`[probe] ${point.pending} pending: settled ${mib(point.rssBytes)} MiB; after a full GC ${afterGc ? `${mib(afterGc.rssBytes)} MiB (${ratio}x), heap used ${mib(afterGc.heapUsedBytes)}, outside the heap ${mib(afterGc.rssBytes - afterGc.heapTotalBytes)} (external ${mib(afterGc.externalBytes)})` : '-'}`);
    }
  } finally {
    await cleanup.runAll();
  }
});
