import { it } from 'vitest';
import { measureAckLatency } from '../lib/ack-latency.js';
import type { AckBreakdown } from '../lib/results.js';
import { startBenchContext } from '../lib/bench-context.js';
import { createCleanupStack } from '../lib/cleanup-stack.js';
import { createPhaseTimer } from '../lib/phase-timer.js';
import { scaleFromEnvironment } from '../lib/scale.js';
import { warmUp } from '../lib/warm-up.js';

/**
 * `npm run bench:probe`: the ack bursts of the benchmark at one request in flight only (mentions, first
 * clicks, repeat clicks; bot, bare app and Chat SDK bot alternating in each round), the level where the
 * ratio to the bare app is smallest in absolute terms and most at the mercy of the machine. PROBE_ROUNDS
 * (default 8) rounds of the full scale's requests at that level (400). For A/B runs of a setting (`BENCH_BOT_ENV`,
 * `BENCH_NODE_FLAGS`) or of two builds. `PROBE_LEVELS` (e.g. `50,200`) runs other levels instead.
 */
it('measures the acks at one request in flight', async () => {
  const scale = scaleFromEnvironment();
  // PROBE_LEVELS="50,200": the same probe at other levels (their full-scale request counts).
  scale.levels = (process.env.PROBE_LEVELS ?? '1').split(',').map(Number);
  scale.rounds = Number(process.env.PROBE_ROUNDS ?? 8);
  scale.warmup = { textTurns: 300, cardCycles: 200, bareRequests: 300, concurrency: 50 };
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const cleanup = createCleanupStack();
  try {
    const { phase } = createPhaseTimer(() => {});
    const context = await startBenchContext({ inspect: true, cleanup, phase, log });
    await warmUp({ context, scale });
    const measured = await measureAckLatency({ context, scale, phase });
    // Where the time goes, from the servers' side: sent → read (the request waiting for the thread
    // that serves it) and read → ack (that thread's own work, and whatever pauses it).
    for (const [kind, levels] of [['mentions', measured.mention], ['clicks', measured.click], ['repeat clicks', measured.repeatClick]] as const) {
      for (const { concurrency, ackBreakdown } of levels) {
        if (ackBreakdown === undefined) continue;
        const describe = (side: AckBreakdown) => `sent → read p99 ${side.beforeReadMs.p99} ms, read → ack p99 ${side.readToAckMs.p99} ms (max ${side.readToAckMs.max})`;
        log(`[bench]   ${kind} c=${concurrency} breakdown: bot ${describe(ackBreakdown.bot)} | bare ${describe(ackBreakdown.bare)}`);
      }
    }
  } finally {
    await cleanup.runAll();
  }
});
