import type { BenchScale } from './scale.js';
import type { ClickStages } from './closed-loop-clicks.js';
import type { LatencySummary } from './stats.js';

export interface LevelResult {
  concurrency: number;
  /** Interleaved rounds (bare burst, then bot burst); the latencies below are pooled over them. */
  rounds: number;
  bot: LatencySummary;
  bare: LatencySummary;
  /** Median over rounds of (bot p50 ÷ bare p50) in the same round. */
  ratioP50: number;
  roundRatiosP50: number[];
  /** Median over rounds of (bot p99 ÷ bare p99) in the same round: the number the target is judged on. */
  ratioP99: number;
  roundRatiosP99: number[];
  /**
   * A/A: the bare app's second burst of each round ÷ its first (p99), median and per round. A bot ÷
   * bare ratio inside this spread cannot be told apart from the machine's noise.
   */
  noiseFloor: { ratioP99: number; roundRatiosP99: number[] };
  /** Pooled bot p99 ÷ pooled bare p99. */
  pooledRatioP99: number;
  /** CPU the process spent per request during the burst and the work it caused (the bot's: turns included, every process of it). */
  botCpuMsPerRequest: number;
  bareCpuMsPerRequest: number;
  /**
   * How long each process's event loop was blocked while the bursts were being sent (perf_hooks
   * monitorEventLoopDelay, read over the inspector): median over rounds of the p99, and the max.
   */
  eventLoopDelay?: { bot: { p99Ms: number; maxMs: number }; bare: { p99Ms: number; maxMs: number } };
  /** Where the ack time went, seen from inside each server (pooled over rounds). */
  ackBreakdown?: { bot: AckBreakdown; bare: AckBreakdown };
  /**
   * The second baseline, a Chat SDK bot with Redis state (bench/chat-sdk-bot.ts), in the same rounds:
   * its latencies pooled, its p99 ÷ the same round's bare p99 (median and per round), and the bot's
   * p99 ÷ the Chat SDK bot's (median over rounds; below 1 means countersign acked faster).
   */
  chatSdk?: { latency: LatencySummary; ratioP99: number; roundRatiosP99: number[]; botOverChatP99: number; cpuMsPerRequest: number };
}

/** One rate of the open-loop phase: requests due at a fixed pace, latency counted from when each was due. */
export interface OpenLoopLevel {
  kind: 'mention' | 'click';
  ratePerSecond: number;
  requests: number;
  /** Requests ÷ time from the first due to the last answered, for the bot. */
  achievedRatePerSecond: number;
  bot: LatencySummary;
  bare: LatencySummary;
  ratioP99: number;
  chatSdk?: LatencySummary;
  chatSdkRatioP99?: number;
  botOverChatSdkP99?: number;
  /** Clicks only: from when each click was due to its resumed answer in the thread (instant model). */
  answeredMs?: PercentileSummary;
}

/** A resumed turn's cost at one history length (medians over the threads measured). */
export interface HistorySweepPoint {
  /** Earlier exchanges (a mention and its answer) in the thread before the approved call. */
  exchanges: number;
  threads: number;
  /** Redis MEMORY USAGE of the thread's history keys. */
  historyBytes: number;
  /** From the queued resume to the answer: round trips, and bytes the bot sent to Redis. */
  resumeRoundTrips: number;
  resumeBytesWritten: number;
  /** The bot's CPU from the click to the answer (decision included). */
  botCpuMsPerResume: number;
  ackToAnswerMs: number;
}

/** Approve → each stage a person sees, closed loop (see `bench/lib/closed-loop-clicks.ts`). */
export interface ClosedLoopResult extends ClickStages<PercentileSummary> {
  lanes: number;
  /** How long each model call took: 0 for the instant model. */
  modelMs: number;
  clicks: number;
  answersPerSecond: number;
  /** Each stage's latencies counted into buckets (ms). */
  histograms: ClickStages<HistogramBucket[]>;
  p99PerRound: number[];
  firstWaveMaxMs: number;
}

/** Values up to `upToMs` (and above the previous bucket's); `upToMs: null` is everything above the last bound. */
export interface HistogramBucket {
  upToMs: number | null;
  count: number;
}

export interface PercentileSummary {
  p50: number;
  p99: number;
  max: number;
}

export interface AckBreakdown {
  requests: number;
  /** Sent → the server has parsed the request head: waiting to be accepted and read. */
  beforeReadMs: PercentileSummary;
  /** Request head parsed → response finished: signature check, Bolt middleware, listener, ack. */
  readToAckMs: PercentileSummary;
  /** Requests that opened a new connection, and how long until it was accepted. */
  newConnections: number;
  acceptMs?: PercentileSummary;
}

export interface RequestAccounting {
  requests: number;
  roundTrips: number;
  /** Commands the bot sent (EVALSHA counts once; MULTI and EXEC count as commands). */
  clientCommands: number;
  clientCommandNames: Record<string, number>;
  /** Commands Redis executed (INFO commandstats), including those run inside Lua scripts. */
  serverCommands: number;
  serverCommandBreakdown: Record<string, number>;
  /** The last accounted request's round trips in order, e.g. `EVALSHA step` or `MULTI + HSET step + … + EXEC`. */
  exampleTrace?: string[];
}

export interface RedisAccounting {
  perTurn: RequestAccounting;
  perClick: RequestAccounting & {
    /** Click → recorded decision → updated card (what the click itself costs). */
    decisionRoundTrips: number;
    decisionCommands: Record<string, number>;
    /** The turn the decision resumes (queue, history, tool run, answer). */
    resumeRoundTrips: number;
    /** Each resumed turn that took more round trips than most did, as its trace: what the extra was. */
    longerResumeTraces: string[][];
  };
  method: string;
}

export interface RssPoint {
  pending: number;
  /** Settled VmRSS, no GC forced: the number the target is judged on. */
  rssBytes: number;
  /** Read over the inspector right after forcing two full GCs (when heap diagnostics are on). */
  afterFullGc?: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
}

export interface TargetCheck {
  name: string;
  limit: number;
  measured: number;
  unit: string;
  met: boolean;
}

export interface BenchResults {
  schemaVersion: 1;
  scale: string;
  scaleSettings: BenchScale;
  startedAt: string;
  durationMs: number;
  machine: {
    cpus: number;
    cpuModel: string;
    totalMemoryBytes: number;
    node: string;
    platform: string;
    redis: string;
    repository: string;
    /** 1, 5 and 15 minute load averages: above the CPU count, other work shared the machine. */
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
  };
  /** `repeatClick`: clicks on cards already decided (answered with an ephemeral, nothing resumed). */
  ackLatency: { mention: LevelResult[]; click: LevelResult[]; repeatClick: LevelResult[] };
  /** A resumed turn's cost as the thread's history grows. */
  historySweep: HistorySweepPoint[];
  /**
   * Every approved click of the run, every phase and process: threads given the resumed answer, and
   * those given it more than once. Each phase waits for all its answers, so one never given fails the run.
   */
  resumedAnswers: { threads: number; answeredMoreThanOnce: number };
  /**
   * Every approved call in the audit trails of every Redis a bot of the run used (each shard's stream),
   * read once no Redis had work queued, busy or locked (or after the settle timeout: `unsettledRedises`):
   * how many started (`tool-started`) or finished (`tool-executed`) more than once. A call started
   * twice ran twice, whatever was posted.
   */
  approvedCalls: { calls: number; startedMoreThanOnce: number; finishedMoreThanOnce: number; redises: number; unsettledRedises: number };
  /**
   * The one phase with two processes that run turns on one Redis (two all-in-one processes, or two
   * receivers and two workers), mentions spread over both and each Approve sent to both at once.
   */
  twoProcessApprovals: { threads: number; turnRunners: number; clicksSentPerCard: number; ackErrors: number };
  /** Fixed-rate arrivals (mentions, then clicks on the cards they posted), swept over rates. */
  openLoop: OpenLoopLevel[];
  /**
   * Approve → answer posted, closed loop with `lanes` threads in flight (instant model), over a few
   * rounds: `answeredMs` pooled, `p99PerRound` each round's; each lane's first click (all lanes at one
   * instant, a burst rather than `lanes` in flight) is left out of both and its worst is `firstWaveMaxMs`.
   */
  closedLoopClicks: ClosedLoopResult;
  /** The same loop with a model that takes `modelMs` per call (one round): what a person waits for with a real model. */
  closedLoopClicksSlowModel: ClosedLoopResult;
  /**
   * Turns per second with a 500 ms model: one all-in-one process, then through a receiver, for one and
   * two worker processes. Each deployment is warmed with a batch that is not measured, then measured
   * once per round in an order that rotates; the figures are medians over the rounds.
   */
  turnThroughput: {
    modelMs: number;
    /**
     * First one all-in-one process (`workers` 1: it runs the turns itself, behind its front thread),
     * then a receiver with one and with two worker processes. `turns` is per round; `wallMs`,
     * `turnsPerSecond`, `peakConcurrentModelCalls` and `workerCpuMsPerTurn` (the CPU of the processes
     * that ran the turns, until they were idle again) are medians over the rounds.
     */
    runs: Array<{
      deployment: 'all-in-one' | 'receiver + workers';
      workers: number;
      turns: number;
      rounds: number;
      wallMs: number;
      turnsPerSecond: number;
      /** Each round's turns per second, in round order. */
      roundTurnsPerSecond: number[];
      peakConcurrentModelCalls: number;
      workerCpuMsPerTurn: number;
    }>;
    /** With both a one- and a two-worker run (full scale): median over rounds of that round's two ÷ one. */
    twoWorkersOverOne?: number;
    roundTwoWorkersOverOne?: number[];
  };
  /** Each first click from when it was sent: to its card showing the decision, and to the resumed answer in the thread. */
  clickEndToEnd: Array<{
    concurrency: number;
    clicks: number;
    cardUpdatedMs: PercentileSummary;
    answeredMs: PercentileSummary;
  }>;
  throughput: {
    concurrency: number;
    /** Clicks per round; the rates are medians over the rounds. */
    clicks: number;
    rounds: number;
    /** Clicks ÷ time from the first click sent to the last card showing its decision. */
    decisionsPerSecond: number;
    /** Clicks ÷ time from the first click sent to the last resumed turn's answer. */
    resumedTurnsPerSecond: number;
    /** Every process of the bot (with BENCH_ROLES=split the receiver and the worker), the resumed turn included. */
    botCpuMsPerClick: number;
  };
  redis: RedisAccounting & {
    memory: {
      pendingSteps: number;
      stepHashBytesPerPending: number;
      scheduleBytesPerPending: number;
      /** Step hash + its entries in the sorted sets indexing steps: what one pending approval costs, history excluded. */
      bytesPerPendingApproval: number;
      decidedStepHashBytes: number;
      decidedSteps: number;
      historyBytesPerThread: number;
      threadsMeasured: number;
      historyStoredOncePerThread: boolean;
      usedMemoryBytesPerPendingAllIn: number;
      stepIndexes: Record<string, { bytes: number; entries: number; bytesPerEntry: number; listsPendingSteps: boolean }>;
      keyFamilies: Record<string, { keys: number; bytes: number }>;
      method: string;
    };
  };
  /** `process`: whose RSS (the process that runs the turns: `all-in-one process`, or the `worker process` with BENCH_ROLES=split). */
  rss: { process: string; points: RssPoint[]; ratioMaxToZero: number; ratioMaxToZeroAfterFullGc?: number; method: string };
  /**
   * `processes`: whose CPU (every process of the bot: `all-in-one process`, or `receiver + worker`);
   * `msPerTurnByProcess`: the turn's CPU in each of them.
   */
  cpu: { processes: string; msPerTurn: number; msPerTurnByProcess: Record<string, number>; turnsMeasured: number; turnsPerSecond: number; msPerClickWithResume: number; method: string };
  phasesMs: Record<string, number>;
  targets: TargetCheck[];
}

/** Every number in the results, with its path, for "is every metric present and finite" checks. */
export function numericLeaves(value: unknown, path = ''): Array<{ path: string; value: number }> {
  if (typeof value === 'number') return [{ path, value }];
  if (Array.isArray(value)) return value.flatMap((item, index) => numericLeaves(item, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => numericLeaves(item, path ? `${path}.${key}` : key));
  }
  return [];
}
