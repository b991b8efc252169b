import { it } from 'vitest';
import { startBenchContext } from '../lib/bench-context.js';
import { createCleanupStack } from '../lib/cleanup-stack.js';
import { measureHistorySweep } from '../lib/history-sweep.js';
import { createPhaseTimer } from '../lib/phase-timer.js';
import { scaleFromEnvironment } from '../lib/scale.js';

/**
 * The benchmark's history-length sweep alone, with more threads per length (PROBE_THREADS, default
 * 10) and the lengths in PROBE_EXCHANGES (default 1,10,100): what a resumed turn costs the bot in CPU,
 * Redis round trips and bytes as its thread grows, for A/B work on the per-turn cost of a history.
 */
it('measures what a resumed turn costs as its history grows', async () => {
  const scale = scaleFromEnvironment();
  scale.historySweep = {
    threads: Number(process.env.PROBE_THREADS ?? 10),
    exchanges: (process.env.PROBE_EXCHANGES ?? '1,10,100').split(',').map(Number),
  };
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const cleanup = createCleanupStack();
  try {
    const context = await startBenchContext({ inspect: false, cleanup, phase: createPhaseTimer(() => {}).phase, log });
    const points = await measureHistorySweep({ context, scale });
    const [first] = points;
    for (const point of points) {
      const ratio = first ? (point.botCpuMsPerResume / first.botCpuMsPerResume).toFixed(2) : '-';
      log(`[probe] ${point.exchanges} exchanges (${point.historyBytes} B): CPU ${point.botCpuMsPerResume} ms (${ratio}x), ${point.resumeRoundTrips} round trips, ${point.resumeBytesWritten} B, ack -> answer ${point.ackToAnswerMs} ms`);
    }
  } finally {
    await cleanup.runAll();
  }
});
