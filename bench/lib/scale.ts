import { IDLE_WINDOW_MS } from './processes.js';

/** How much work each phase does. `BENCH_SCALE=smoke|full` picks one; a few env vars adjust it. */
export interface BenchScale {
  name: string;
  /** In-flight requests for the ack-latency bursts. */
  levels: number[];
  /** Requests per burst at each level, the same for the bot and the bare Bolt app, mentions and clicks. */
  requestsPerLevel: Record<number, number>;
  /** Each level is measured this many times, bare app and bot back to back. */
  rounds: number;
  warmup: {
    /** Mention turns answered with text (no card), to warm the bot's code and reach its working heap. */
    textTurns: number;
    /** Mention → card → approve → resumed answer, to warm the click path. */
    cardCycles: number;
    /** Requests of each kind sent to the bare app before measuring. */
    bareRequests: number;
    concurrency: number;
  };
  /** Pending approvals at which RSS is measured; 0 is measured after the warm-up. */
  pendingTargets: number[];
  /** Pending approvals are created by real mentions, this many in flight, in batches. */
  creation: { concurrency: number; batch: number };
  /** Sequential turns and clicks on a separate bot behind the counting Redis proxy (after `warmupCycles`). */
  accounting: { turns: number; clicks: number; warmupCycles: number };
  /**
   * Mentions answered by a 500 ms model, sent to one all-in-one process and to a receiver with each
   * count of workers: `warmUpTurns` to each first (not measured), then `turns` to each per round, for
   * `rounds` rounds in a rotating order.
   */
  turnThroughput: { turns: number; concurrency: number; workerCounts: number[]; rounds: number; warmUpTurns: number };
  /**
   * Approve → answer, `lanes` threads in flight, each clicking its next card once its answer is
   * posted; `rounds` times with the instant model, `slowModelRounds` times with the 500 ms one.
   */
  closedLoop: { lanes: number; clicksPerLane: number; rounds: number; slowModelRounds: number };
  /** Open-loop arrivals: each rate (requests per second) runs for `seconds`, mentions then clicks. */
  openLoop: { rates: number[]; seconds: number };
  /** Card mentions spread over two bots on one Redis, each Approve then sent to both (see two-process-approvals.ts). */
  twoProcessApprovals: { threads: number; concurrency: number };
  /** Threads built up to each number of earlier exchanges, then one approved call each, measured alone. */
  historySweep: { exchanges: number[]; threads: number };
  /** Idle time before RSS is sampled. */
  rssSettleMs: number;
  /**
   * How long the processes must use (almost) no CPU before the work they were sent counts as done
   * (`waitForCpuIdle`'s window), between bursts and phases: the smoke run only needs its phases kept
   * apart, not the quiet a measurement waits for.
   */
  idleWindowMs: number;
}

export const SCALES: Record<'smoke' | 'full', BenchScale> = {
  smoke: {
    name: 'smoke',
    levels: [1, 5],
    requestsPerLevel: { 1: 3, 5: 5 },
    rounds: 2,
    warmup: { textTurns: 3, cardCycles: 1, bareRequests: 5, concurrency: 5 },
    pendingTargets: [0, 10],
    creation: { concurrency: 5, batch: 10 },
    accounting: { turns: 2, clicks: 2, warmupCycles: 1 },
    turnThroughput: { turns: 5, concurrency: 5, workerCounts: [1], rounds: 2, warmUpTurns: 2 },
    closedLoop: { lanes: 2, clicksPerLane: 2, rounds: 1, slowModelRounds: 1 },
    openLoop: { rates: [20], seconds: 0.25 },
    twoProcessApprovals: { threads: 4, concurrency: 4 },
    historySweep: { exchanges: [1, 3], threads: 1 },
    rssSettleMs: 100,
    idleWindowMs: 100,
  },
  full: {
    name: 'full',
    levels: [1, 50, 200],
    // 400 at one in flight: a round's p99 of 100 requests was its second-worst request.
    requestsPerLevel: { 1: 400, 50: 300, 200: 500 },
    rounds: 8,
    warmup: { textTurns: 1_000, cardCycles: 200, bareRequests: 1_000, concurrency: 50 },
    pendingTargets: [0, 1_000, 10_000],
    creation: { concurrency: 50, batch: 1_000 },
    accounting: { turns: 50, clicks: 50, warmupCycles: 3 },
    turnThroughput: { turns: 2_000, concurrency: 200, workerCounts: [1, 2], rounds: 3, warmUpTurns: 1_000 },
    closedLoop: { lanes: 50, clicksPerLane: 12, rounds: 3, slowModelRounds: 1 },
    openLoop: { rates: [25, 50, 100, 200], seconds: 10 },
    twoProcessApprovals: { threads: 500, concurrency: 50 },
    historySweep: { exchanges: [1, 10, 100], threads: 5 },
    rssSettleMs: 1_000,
    idleWindowMs: IDLE_WINDOW_MS,
  },
};

/**
 * BENCH_SCALE=smoke|full (default full). BENCH_PENDING=0,1000,10000 replaces the RSS points;
 * BENCH_REQUESTS_FACTOR=0.5 scales the burst sizes (at least 20 requests per burst);
 * BENCH_ROUNDS=12 sets the interleaved rounds per level; BENCH_OPEN_LOOP_RATES=50,100 the
 * open-loop rates (requests per second).
 */
export function scaleFromEnvironment(environment: NodeJS.ProcessEnv = process.env): BenchScale {
  const name = environment.BENCH_SCALE === 'smoke' ? 'smoke' : 'full';
  const base = structuredClone(SCALES[name]);
  if (environment.BENCH_PENDING) {
    const targets = environment.BENCH_PENDING.split(',').map((part) => Number(part.trim()));
    if (targets.some((target) => !Number.isInteger(target) || target < 0)) throw new Error(`BENCH_PENDING must list whole numbers, got ${environment.BENCH_PENDING}`);
    base.pendingTargets = [...new Set([0, ...targets])].sort((left, right) => left - right);
  }
  const factor = Number(environment.BENCH_REQUESTS_FACTOR ?? 1);
  if (!(factor > 0)) throw new Error(`BENCH_REQUESTS_FACTOR must be a positive number, got ${environment.BENCH_REQUESTS_FACTOR}`);
  if (factor !== 1) {
    for (const level of base.levels) base.requestsPerLevel[level] = Math.max(20, Math.round((base.requestsPerLevel[level] ?? 0) * factor));
  }
  if (environment.BENCH_ROUNDS) {
    const rounds = Number(environment.BENCH_ROUNDS);
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a whole number of at least 1, got ${environment.BENCH_ROUNDS}`);
    base.rounds = rounds;
  }
  if (environment.BENCH_OPEN_LOOP_RATES) {
    const rates = environment.BENCH_OPEN_LOOP_RATES.split(',').map((part) => Number(part.trim()));
    if (rates.some((rate) => !(rate > 0))) throw new Error(`BENCH_OPEN_LOOP_RATES must list positive numbers, got ${environment.BENCH_OPEN_LOOP_RATES}`);
    base.openLoop.rates = rates;
  }
  return base;
}
