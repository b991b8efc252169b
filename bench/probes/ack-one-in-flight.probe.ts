import { it } from 'vitest';
import { measureAckLatency } from '../lib/ack-latency.js';
import { startBenchContext } from '../lib/bench-context.js';
import { createCleanupStack } from '../lib/cleanup-stack.js';
import { createPhaseTimer } from '../lib/phase-timer.js';
import { scaleFromEnvironment } from '../lib/scale.js';
import { warmUp } from '../lib/warm-up.js';

/**
 * `npm run bench:probe`: the ack bursts of the benchmark at one request in flight only (mentions, first
 * clicks, repeat clicks; bot, bare app and Chat SDK bot alternating in each round), the level where the
 * ratio to the bare app is smallest in absolute terms and most at the mercy of the machine. PROBE_ROUNDS
 * (default 8) rounds of the full scale's 100 requests. For A/B runs of a setting (`BENCH_BOT_ENV`,
 * `BENCH_NODE_FLAGS`) or of two builds.
 */
it('measures the acks at one request in flight', async () => {
  const scale = scaleFromEnvironment();
  scale.levels = [1];
  scale.rounds = Number(process.env.PROBE_ROUNDS ?? 8);
  scale.warmup = { textTurns: 300, cardCycles: 200, bareRequests: 300, concurrency: 50 };
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const cleanup = createCleanupStack();
  try {
    const { phase } = createPhaseTimer(() => {});
    const context = await startBenchContext({ inspect: true, cleanup, phase, log });
    await warmUp({ context, scale });
    await measureAckLatency({ context, scale, phase });
  } finally {
    await cleanup.runAll();
  }
});
