import { it } from 'vitest';
import { startBenchContext } from '../lib/bench-context.js';
import { createCleanupStack } from '../lib/cleanup-stack.js';
import { createPhaseTimer } from '../lib/phase-timer.js';
import { measureRedisRoundTrips } from '../lib/redis-round-trips.js';
import { scaleFromEnvironment } from '../lib/scale.js';

/**
 * The benchmark's Redis accounting alone, with more clicks (PROBE_CLICKS, default 200): round trips per
 * resumed turn, and the trace of every resumed turn that took more than most. With BENCH_ROLES=split
 * the accounted bot is a receiver with a worker beside it.
 */
it('counts the Redis round trips of resumed turns', async () => {
  const scale = scaleFromEnvironment();
  const clicks = Number(process.env.PROBE_CLICKS ?? 200);
  scale.accounting = { turns: 1, clicks, warmupCycles: 3 };
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const cleanup = createCleanupStack();
  try {
    const { phase } = createPhaseTimer(() => {});
    const context = await startBenchContext({ inspect: false, cleanup, phase, log });
    const accounting = await measureRedisRoundTrips({ context, scale });
    const { perClick } = accounting;
    log(`[bench] per mention turn ${accounting.perTurn.roundTrips} round trips: ${accounting.perTurn.exampleTrace?.join(" | ")}`);
    log(`[bench] ${perClick.requests} clicks: decision ${perClick.decisionRoundTrips} round trips, resumed turn ${perClick.resumeRoundTrips}; usual trace: ${perClick.exampleTrace?.join(' | ')}`);
    for (const trace of perClick.longerResumeTraces) log(`[bench]   longer resumed turn (${trace.length}): ${trace.join(' | ')}`);
  } finally {
    await cleanup.runAll();
  }
});
