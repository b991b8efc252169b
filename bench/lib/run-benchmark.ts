import { loadavg } from 'node:os';
import { measureAckLatency } from './ack-latency.js';
import { startBenchContext, type BenchContext } from './bench-context.js';
import { assembleResults } from './benchmark-results.js';
import { createCleanupStack } from './cleanup-stack.js';
import { measurePendingApprovals } from './pending-approvals.js';
import { createPhaseTimer } from './phase-timer.js';
import { redisMemory } from './redis-memory.js';
import { measureRedisRoundTrips } from './redis-round-trips.js';
import type { BenchResults } from './results.js';
import type { BenchScale } from './scale.js';
import { measureClosedLoopRounds } from './closed-loop-clicks.js';
import { measureTurnThroughput } from './turn-throughput.js';
import { measureHistorySweep } from './history-sweep.js';
import { measureOpenLoop } from './open-loop.js';
import { readApprovedCalls } from './exactly-once.js';
import { measureTwoProcessApprovals } from './two-process-approvals.js';
import { warmUp } from './warm-up.js';

export interface RunBenchmarkOptions {
  scale: BenchScale;
  log?: (line: string) => void;
  /**
   * Starts the bot and the bare app with `--inspect=127.0.0.1:0` (a session is attached only
   * between bursts) so that the benchmark can read from inside each process its event-loop delay
   * and when each request was accepted, read and acked (diagnostics channels), and, after each
   * settled RSS sample, force a full GC and read RSS and the JS heap: retained state shows there, a
   * garbage collector's high-water mark does not. Default true (BENCH_INSPECT=0 turns it off).
   */
  inspect?: boolean;
}

/**
 * Drives the real bot (`node dist/main.js`) and a bare Bolt app, both as child processes, over signed
 * HTTP, against a real redis-server and the in-repo fake Slack and instant fake model; returns every
 * metric. Everything that is timed is also measured on the bare app in the same run, so the
 * results that matter are ratios.
 */
export async function runBenchmark(options: RunBenchmarkOptions): Promise<BenchResults> {
  const { scale } = options;
  const log = options.log ?? (() => {});
  const startedAt = Date.now();
  const loadAverageAtStart = loadavg();
  const { phase, phaseMs } = createPhaseTimer(log);
  const cleanup = createCleanupStack();
  try {
    const context = await startBenchContext({ inspect: options.inspect ?? true, cleanup, phase, log, idleWindowMs: scale.idleWindowMs });
    await phase('warm-up', () => warmUp({ context, scale }));
    const ackLatency = await measureAckLatency({ context, scale, phase });
    const pending = await phase('pending approvals and RSS', () => measurePendingApprovals({ context, scale }));
    const memory = await phase('redis memory', () =>
      redisMemory({
        redis: context.redisInspector,
        pendingThreads: pending.pendingThreads,
        usedMemoryAtZero: pending.usedMemoryAtZero,
        usedMemoryAtMax: pending.usedMemoryAtMax,
        pendingCount: pending.pendingThreads.length,
      }),
    );
    const accounting = await phase('redis round trips', () => measureRedisRoundTrips({ context, scale }));
    const closedLoopClicks = await phase('closed-loop clicks', () => measureClosedLoopRounds({ context, scale }));
    const closedLoopClicksSlowModel = await phase('closed-loop clicks, 500 ms model', () =>
      measureClosedLoopRounds({ context, scale, mode: 'slow-card', rounds: scale.closedLoop.slowModelRounds }),
    );
    const openLoop = await phase('open-loop arrivals', () => measureOpenLoop({ context, scale }));
    const historySweep = await phase('history-length sweep', () => measureHistorySweep({ context, scale }));
    const turnThroughput = await phase('turn throughput, 500 ms model', () => measureTurnThroughput({ context, scale }));
    const twoProcessApprovals = await phase('approvals, two processes on one Redis', () => measureTwoProcessApprovals({ context, scale }));
    // After every Redis has settled (no work queued or locked: nothing left to run a call again).
    const approvedCalls = await phase('exactly-once count', () => readApprovedCalls({ redisUrls: context.botRedisUrls() }));
    logBotOutput(context);
    context.observer.poll();
    const resumedAnswers = context.observer.resumedAnswerTally();
    return assembleResults({
      scale,
      startedAt,
      loadAverageAtStart,
      ackLatency,
      pending,
      memory,
      accounting,
      turnThroughput,
      closedLoopClicks,
      closedLoopClicksSlowModel,
      openLoop,
      historySweep,
      resumedAnswers,
      approvedCalls,
      twoProcessApprovals,
      phaseMs,
    });
  } finally {
    await cleanup.runAll();
  }
}

/** The tail of what the bot wrote (at LOG_LEVEL=warn: its warnings and errors), minus the inspector's own lines. */
function logBotOutput(context: BenchContext): void {
  const botOutput = context.bot.handle
    .output()
    .split('\n')
    .filter((line) => !/^(Debugger (listening|attached|ending)|For help, see)/.test(line))
    .join('\n')
    .trim();
  if (botOutput) context.log(`[bench] the bot wrote (tail):\n${botOutput.slice(-1_500)}`);
}
