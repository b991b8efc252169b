import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/helpers/fake-slack-api.js';
import { startRedisServer } from '../../test/helpers/redis-server.js';
import {
  cpuMs,
  freePort,
  REPOSITORY_ROOT,
  settledRss,
  startLoadGenerator,
  startNodeServer,
  waitForCpuIdle,
  type ChildHandle,
  type LoadResult,
} from './processes.js';
import { redisAccounting } from './redis-accounting.js';
import { countPendingSteps, redisMemory } from './redis-memory.js';
import { startCountingProxy } from './redis-proxy.js';
import { usedMemory } from './redis-inspect.js';
import type { BenchScale } from './scale.js';
import { median, percentile, ratio, round, summarize, type LatencySummary } from './stats.js';
import {
  BENCH_CONFIG_YAML,
  BOT_ID,
  BOT_USER_ID,
  clickRequest,
  createSlackObserver,
  createThreadFactory,
  installModelScript,
  mentionRequest,
  SIGNING_SECRET,
  waitUntil,
  type Card,
  type MentionMode,
  type RequestSpec,
  type Thread,
} from './workload.js';
import {
  heapAfterGc,
  inspectorUrl,
  readEventLoopDelay,
  resetEventLoopDelay,
  resetRequestTimings,
  takeRequestTimings,
  type EventLoopDelay,
  type ServerRequestTiming,
} from './inspector.js';
import type { AckBreakdown, BenchResults, LevelResult, RssPoint, TargetCheck } from './results.js';

/** Generous: on a loaded 2-core machine thousands of queued turns take minutes to drain. */
const DRAIN_TIMEOUT_MS = 15 * 60 * 1000;

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

interface BotUnderTest {
  handle: ChildHandle;
  eventsUrl: string;
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
  const started = Date.now();
  const loadAverageAtStart = loadavg();
  const phaseMs: Record<string, number> = {};
  const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const at = performance.now();
    log(`[bench] ${name}…`);
    try {
      return await work();
    } finally {
      phaseMs[name] = Math.round(performance.now() - at);
      log(`[bench] ${name}: ${(phaseMs[name] / 1000).toFixed(1)} s`);
    }
  };

  const cleanup: Array<() => Promise<unknown>> = [];
  try {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, BENCH_CONFIG_YAML);

    const redis = await startRedisServer();
    cleanup.push(() => redis.stop());
    const accountingRedis = await startRedisServer();
    cleanup.push(() => accountingRedis.stop());
    const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, botId: BOT_ID });
    cleanup.push(() => slack.close());
    const openai = await startFakeOpenAI();
    cleanup.push(() => openai.close());
    installModelScript(openai);
    const observer = createSlackObserver(slack);
    const inspector = new Redis(redis.url, { lazyConnect: false });
    cleanup.push(() => inspector.quit());
    const loadgen = startLoadGenerator();
    cleanup.push(() => loadgen.stop());

    const inspect = options.inspect ?? true;
    const startBot = async (name: string, redisUrl: string, withInspector = false): Promise<BotUnderTest> => {
      const port = await freePort();
      const handle = await startNodeServer({
        name,
        args: [...(withInspector ? ['--inspect=127.0.0.1:0'] : []), 'dist/main.js'],
        port,
        env: botEnvironment({ port, redisUrl, slack, openai, configPath }),
      });
      cleanup.push(() => handle.stop());
      return { handle, eventsUrl: `${handle.url}/slack/events` };
    };
    const bot = await phase('start processes', async () => {
      const started = await startBot('countersign', redis.url, inspect);
      const barePort = await freePort();
      const bare = await startNodeServer({
        name: 'bare-bolt',
        args: [...(inspect ? ['--inspect=127.0.0.1:0'] : []), 'bench/bare-bolt-app.ts'],
        port: barePort,
        env: { PORT: String(barePort), SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.url, SLACK_BOT_USER_ID: BOT_USER_ID, SLACK_BOT_ID: BOT_ID },
      });
      cleanup.push(() => bare.stop());
      return { ...started, bare };
    });
    const bareEventsUrl = `${bot.bare.url}/slack/events`;
    const botInspector = inspect ? inspectorUrl(bot.handle.startupOutput) : undefined;
    const bareInspector = inspect ? inspectorUrl(bot.bare.startupOutput) : undefined;
    if (inspect && (!botInspector || !bareInspector)) throw new Error('started with --inspect but found no inspector URL in the start-up output');
    /**
     * Runs a burst and returns, from inside the server, the event-loop delay it saw meanwhile and
     * when each request was accepted, read and acked.
     */
    const observeBurst = async (
      inspectorAt: string | undefined,
      burst: () => Promise<LoadResult>,
    ): Promise<{ result: LoadResult; delay?: EventLoopDelay; breakdown?: AckBreakdownSample }> => {
      if (inspectorAt) {
        await resetEventLoopDelay(inspectorAt);
        await resetRequestTimings(inspectorAt);
      }
      const result = await burst();
      if (!inspectorAt) return { result };
      const delay = await readEventLoopDelay(inspectorAt);
      return { result, delay, breakdown: breakdownSample(result, await takeRequestTimings(inspectorAt)) };
    };
    const newThreads = createThreadFactory('B');
    const send = (url: string, concurrency: number, requests: RequestSpec[]) => loadgen.run({ url, signingSecret: SIGNING_SECRET, concurrency, requests });

    /** Waits until every turn has posted its card (or, in text mode, its answer). */
    const waitForTurns = (threads: Thread[], mode: MentionMode) =>
      waitUntil(
        () => {
          observer.poll();
          return threads.every((thread) => (mode === 'card' ? observer.hasCard(thread) : observer.hasTextAnswer(thread)));
        },
        { timeoutMs: DRAIN_TIMEOUT_MS, message: `${threads.length} ${mode} turns`, intervalMs: 50 },
      );
    /** Waits until every approved call's resumed turn has answered in its thread. */
    const waitForResumes = (cards: Card[]) =>
      waitUntil(
        () => {
          observer.poll();
          return cards.every((card) => observer.hasAnswer(card.thread));
        },
        { timeoutMs: DRAIN_TIMEOUT_MS, message: `${cards.length} resumed turns`, intervalMs: 50 },
      );
    const clickRequests = (cards: Card[]) =>
      cards.map((card, index) => clickRequest({ channel: card.thread.channel, threadTs: card.thread.threadTs, cardTs: card.cardTs, value: card.approveValue, user: approver(index) }));
    /** Mentions the bot in fresh threads and waits until every turn is done. */
    const mentionBurst = async (threads: Thread[], mode: MentionMode, concurrency: number): Promise<LoadResult> => {
      const result = await send(bot.eventsUrl, concurrency, threads.map((thread) => mentionRequest(thread, mode)));
      await waitForTurns(threads, mode);
      return result;
    };
    /** Approves cards and waits until every resumed turn has answered. */
    const clickBurst = async (cards: Card[], concurrency: number): Promise<LoadResult> => {
      const result = await send(bot.eventsUrl, concurrency, clickRequests(cards));
      await waitForResumes(cards);
      return result;
    };
    const cardsFor = async (threads: Thread[]): Promise<Card[]> => {
      // The card is posted before its ts is stored with the step; let those writes land.
      await waitForCpuIdle(bot.handle.pid);
      const cards = observer.cards(threads);
      if (cards.length !== threads.length) throw new Error(`expected ${threads.length} cards, found ${cards.length}`);
      return cards;
    };

    // ---------------------------------------------------------------- warm-up
    await phase('warm-up', async () => {
      const bareMentions = newThreads(scale.warmup.bareRequests).map((thread) => mentionRequest(thread, 'card'));
      await send(bareEventsUrl, scale.warmup.concurrency, bareMentions);
      await send(bareEventsUrl, scale.warmup.concurrency, bareClicks(scale.warmup.bareRequests));
      await mentionBurst(newThreads(scale.warmup.textTurns), 'text', scale.warmup.concurrency);
      const cycleThreads = newThreads(scale.warmup.cardCycles);
      await mentionBurst(cycleThreads, 'card', scale.warmup.concurrency);
      await clickBurst(await cardsFor(cycleThreads), scale.warmup.concurrency);
      await waitForCpuIdle(bot.handle.pid);
    });

    // ---------------------------------------------------------------- ack latency
    const mentionLevels: LevelResult[] = [];
    const clickLevels: LevelResult[] = [];
    const cardsByLevel = new Map<number, Card[]>();
    /**
     * One round at one level: the bare app's burst and the bot's, back to back in alternating order
     * (bare first in even rounds, bot first in odd ones), so both see the same background noise and
     * drift cancels. Each side's CPU and event-loop delay are taken around its own burst; the bot's
     * CPU includes draining the work the burst caused.
     */
    const measureRound = async (
      round: number,
      bareBurst: () => Promise<LoadResult>,
      botBurst: () => Promise<LoadResult>,
      botDrain: (result: LoadResult) => Promise<void>,
    ): Promise<RoundSample> => {
      const runBare = async () => {
        const before = cpuMs(bot.bare.pid);
        const measured = await observeBurst(bareInspector, bareBurst);
        return { ...measured, cpuMs: cpuMs(bot.bare.pid) - before };
      };
      const runBot = async () => {
        const before = cpuMs(bot.handle.pid);
        const measured = await observeBurst(botInspector, botBurst);
        await botDrain(measured.result);
        await waitForCpuIdle(bot.handle.pid);
        return { ...measured, cpuMs: cpuMs(bot.handle.pid) - before };
      };
      const bareFirst = round % 2 === 0;
      if (process.env.BENCH_DEBUG) debugRound(log, round, 'starting');
      const first = bareFirst ? await runBare() : await runBot();
      const second = bareFirst ? await runBot() : await runBare();
      const [bareSide, botSide] = bareFirst ? [first, second] : [second, first];
      if (process.env.BENCH_DEBUG) {
        debugRound(log, round, 'bot', botSide.result, botSide.delay);
        debugRound(log, round, 'bare', bareSide.result, bareSide.delay);
      }
      return {
        bot: botSide.result,
        bare: bareSide.result,
        botCpuMs: botSide.cpuMs,
        bareCpuMs: bareSide.cpuMs,
        botLoopDelay: botSide.delay,
        bareLoopDelay: bareSide.delay,
        botBreakdown: botSide.breakdown,
        bareBreakdown: bareSide.breakdown,
      };
    };

    await phase('mention bursts', async () => {
      for (const level of scale.levels) {
        const count = scale.requestsPerLevel[level] ?? 0;
        const rounds: RoundSample[] = [];
        const cards: Card[] = [];
        for (let round = 0; round < scale.rounds; round += 1) {
          const threads = newThreads(count);
          rounds.push(
            await measureRound(
              round,
              () => send(bareEventsUrl, level, newThreads(count).map((thread) => mentionRequest(thread, 'card'))),
              () => send(bot.eventsUrl, level, threads.map((thread) => mentionRequest(thread, 'card'))),
              async () => {
                await waitForTurns(threads, 'card');
                cards.push(...(await cardsFor(threads)));
              },
            ),
          );
        }
        cardsByLevel.set(level, cards);
        mentionLevels.push(levelResult(level, rounds));
        log(`[bench]   mentions c=${level}: ${describeLevel(mentionLevels.at(-1)!)}`);
      }
    });
    let throughput: BenchResults['throughput'] | undefined;
    await phase('click bursts', async () => {
      for (const level of scale.levels) {
        const count = scale.requestsPerLevel[level] ?? 0;
        const levelCards = cardsByLevel.get(level) ?? [];
        const rounds: RoundSample[] = [];
        const decisionRates: number[] = [];
        const resumeRates: number[] = [];
        for (let round = 0; round < scale.rounds; round += 1) {
          const cards = levelCards.slice(round * count, (round + 1) * count);
          rounds.push(
            await measureRound(
              round,
              () => send(bareEventsUrl, level, bareClicks(cards.length)),
              () => send(bot.eventsUrl, level, clickRequests(cards)),
              async (measured) => {
                await waitForResumes(cards);
                const allAnsweredAt = Date.now();
                const decidedAt = cards.map((card) => observer.firstUpdateAfter(card, measured.startedAt));
                if (decidedAt.some((at) => at === undefined)) throw new Error('a clicked card was never updated with its decision');
                const lastDecision = Math.max(...(decidedAt as number[]));
                decisionRates.push((cards.length * 1000) / Math.max(1, lastDecision - measured.startedAt));
                resumeRates.push((cards.length * 1000) / Math.max(1, allAnsweredAt - measured.startedAt));
              },
            ),
          );
        }
        const result = levelResult(level, rounds);
        clickLevels.push(result);
        log(`[bench]   clicks c=${level}: ${describeLevel(result)}`);
        throughput = {
          concurrency: level,
          clicks: count,
          rounds: scale.rounds,
          decisionsPerSecond: round(median(decisionRates), 1),
          resumedTurnsPerSecond: round(median(resumeRates), 1),
          botCpuMsPerClick: result.botCpuMsPerRequest,
        };
      }
    });

    // Clicks on cards that are already decided (a second person, a double click): the bot answers
    // with an ephemeral "Already approved by …" and resumes nothing, so the work after the ack is
    // small. Compared with the first clicks, this separates the ack path from what follows it.
    const repeatClickLevels: LevelResult[] = [];
    await phase('repeat-click bursts', async () => {
      for (const level of scale.levels) {
        const count = scale.requestsPerLevel[level] ?? 0;
        const levelCards = cardsByLevel.get(level) ?? [];
        const rounds: RoundSample[] = [];
        for (let round = 0; round < scale.rounds; round += 1) {
          const cards = levelCards.slice(round * count, (round + 1) * count);
          observer.poll();
          const ephemeralsBefore = observer.ephemeralCount();
          rounds.push(
            await measureRound(
              round,
              () => send(bareEventsUrl, level, bareClicks(cards.length)),
              () => send(bot.eventsUrl, level, clickRequests(cards)),
              () =>
                waitUntil(
                  () => {
                    observer.poll();
                    return observer.ephemeralCount() - ephemeralsBefore >= cards.length;
                  },
                  { timeoutMs: DRAIN_TIMEOUT_MS, message: `${cards.length} "already decided" answers`, intervalMs: 50 },
                ),
            ),
          );
        }
        repeatClickLevels.push(levelResult(level, rounds));
        log(`[bench]   repeat clicks c=${level}: ${describeLevel(repeatClickLevels.at(-1)!)}`);
      }
    });

    // ---------------------------------------------------------------- RSS and CPU with pending approvals
    const rssPoints: RssPoint[] = [];
    const creation = { turns: 0, cpuMs: 0, wallMs: 0 };
    let usedMemoryAtZero = Number.NaN;
    let usedMemoryAtMax = Number.NaN;
    let created = 0;
    const pendingThreads: Thread[] = [];
    await phase('pending approvals and RSS', async () => {
      for (const target of [...scale.pendingTargets].sort((left, right) => left - right)) {
        while (created < target) {
          const threads = newThreads(Math.min(scale.creation.batch, target - created));
          const cpuBefore = cpuMs(bot.handle.pid);
          const at = performance.now();
          await mentionBurst(threads, 'card', scale.creation.concurrency);
          await waitForCpuIdle(bot.handle.pid, { windowMs: 200 });
          creation.wallMs += performance.now() - at;
          creation.cpuMs += cpuMs(bot.handle.pid) - cpuBefore;
          creation.turns += threads.length;
          created += threads.length;
          pendingThreads.push(...threads);
          log(`[bench]   ${created} pending`);
        }
        if (target === 0) {
          // The same load as each creation batch, answered with text: every RSS point then follows
          // an identical burst, so the garbage collector's high-water mark is comparable.
          await mentionBurst(newThreads(scale.creation.batch), 'text', scale.creation.concurrency);
          await waitForCpuIdle(bot.handle.pid, { windowMs: 200 });
        }
        const pendingInRedis = await countPendingSteps(inspector);
        if (pendingInRedis !== target) throw new Error(`expected ${target} pending approvals in Redis, found ${pendingInRedis}`);
        const rss = await settledRss(bot.handle.pid, { idleMs: scale.rssSettleMs });
        const heap = botInspector ? await heapAfterGc(botInspector) : undefined;
        rssPoints.push({
          pending: target,
          rssBytes: rss,
          ...(heap ? { afterFullGc: { rssBytes: heap.rssBytes, heapUsedBytes: heap.heapUsedBytes, heapTotalBytes: heap.heapTotalBytes, externalBytes: heap.externalBytes } } : {}),
        });
        if (target === 0) usedMemoryAtZero = await usedMemory(inspector);
        usedMemoryAtMax = await usedMemory(inspector);
        log(`[bench]   RSS at ${target} pending: ${(rss / 1048576).toFixed(1)} MiB${heap ? `; after a full GC: RSS ${(heap.rssBytes / 1048576).toFixed(1)} MiB, JS heap used ${(heap.heapUsedBytes / 1048576).toFixed(1)} MiB` : ''}`);
      }
    });

    // ---------------------------------------------------------------- Redis memory
    const memory = await phase('redis memory', () =>
      redisMemory({ redis: inspector, pendingThreads, usedMemoryAtZero, usedMemoryAtMax, pendingCount: created }),
    );

    // ---------------------------------------------------------------- Redis commands and round trips
    const accounting = await phase('redis round trips', async () => {
      const proxy = await startCountingProxy({ host: '127.0.0.1', port: accountingRedis.port });
      cleanup.push(() => proxy.close());
      const accountedBot = await startBot('countersign-accounting', proxy.url);
      const accountingInspector = new Redis(accountingRedis.url);
      cleanup.push(() => accountingInspector.quit());
      const result = await redisAccounting({
        scale,
        proxy,
        inspector: accountingInspector,
        observer,
        newThreads: createThreadFactory('A'),
        sendOne: (request) => send(accountedBot.eventsUrl, 1, [request]),
        approver,
      });
      await accountedBot.handle.stop();
      return result;
    });

    // ---------------------------------------------------------------- results
    const botOutput = bot.handle
      .output()
      .split('\n')
      .filter((line) => !/^(Debugger (listening|attached|ending)|For help, see)/.test(line))
      .join('\n')
      .trim();
    if (botOutput) log(`[bench] the bot wrote (tail):\n${botOutput.slice(-1_500)}`);
    const zeroPoint = rssPoints.find((point) => point.pending === 0);
    const lastPoint = rssPoints.at(-1);
    const rssAtZero = zeroPoint?.rssBytes ?? Number.NaN;
    const rssAtMax = lastPoint?.rssBytes ?? Number.NaN;
    // Judged after a forced full GC when the inspector is available: what the process retains.
    // The settled RSS without a forced GC is reported too; it moves with the collector's timing.
    const judgedZero = zeroPoint?.afterFullGc?.rssBytes ?? rssAtZero;
    const judgedMax = lastPoint?.afterFullGc?.rssBytes ?? rssAtMax;
    const judgedAfterGc = zeroPoint?.afterFullGc !== undefined;
    const top = scale.levels.at(-1) ?? 1;
    const topClick = clickLevels.find((level) => level.concurrency === top);
    const cpuPerTurn = round(creation.cpuMs / Math.max(1, creation.turns));
    const targets: TargetCheck[] = [
      {
        name: `p99 click ack at concurrency ${top} within 1.5x of the bare Bolt app`,
        limit: 1.5,
        measured: topClick?.ratioP99 ?? Number.NaN,
        unit: 'x bare',
        met: (topClick?.ratioP99 ?? Number.POSITIVE_INFINITY) <= 1.5,
      },
      {
        name: 'at most 3 Redis round trips per click (click to recorded decision and updated card)',
        limit: 3,
        measured: accounting.perClick.decisionRoundTrips,
        unit: 'round trips',
        met: accounting.perClick.decisionRoundTrips <= 3,
      },
      {
        name: 'at most 2 KB of Redis per pending approval, excluding history',
        limit: 2048,
        measured: memory.bytesPerPendingApproval,
        unit: 'bytes',
        met: memory.bytesPerPendingApproval <= 2048,
      },
      {
        name: `RSS at ${lastPoint?.pending ?? 0} pending within 10% of RSS at 0${judgedAfterGc ? ' (after a forced full GC)' : ''}`,
        limit: 1.1,
        measured: ratio(judgedMax, judgedZero),
        unit: 'x RSS at 0',
        met: judgedMax / judgedZero <= 1.1,
      },
    ];
    return {
      schemaVersion: 1,
      scale: scale.name,
      scaleSettings: scale,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      machine: machine(loadAverageAtStart),
      ackLatency: { mention: mentionLevels, click: clickLevels, repeatClick: repeatClickLevels },
      throughput: throughput ?? { concurrency: 0, clicks: 0, rounds: 0, decisionsPerSecond: Number.NaN, resumedTurnsPerSecond: Number.NaN, botCpuMsPerClick: Number.NaN },
      redis: { ...accounting, memory },
      rss: {
        points: rssPoints,
        ratioMaxToZero: ratio(rssAtMax, rssAtZero),
        ...(judgedAfterGc ? { ratioMaxToZeroAfterFullGc: ratio(judgedMax, judgedZero) } : {}),
        method:
          `Each point follows the same burst (a batch of mentions at the creation concurrency; text answers before the 0 point). Settled: VmRSS of the bot process from /proc/<pid>/status, median of 5 samples 200 ms apart, after its CPU has been idle for 300 ms and a further ${scale.rssSettleMs} ms. Then, over the inspector, two forced full GCs and process.memoryUsage() (RSS and JS heap used); the target is judged on that RSS.`,
      },
      cpu: {
        msPerTurn: cpuPerTurn,
        turnsMeasured: creation.turns,
        turnsPerSecond: round((creation.turns * 1000) / Math.max(1, creation.wallMs), 1),
        msPerClickWithResume: throughput?.botCpuMsPerClick ?? Number.NaN,
        method: `utime+stime of the bot process (/proc/<pid>/stat) over ${creation.turns} mention turns (card mode, ${scale.creation.concurrency} in flight) with an instant model in another process, divided by the turns`,
      },
      phasesMs: phaseMs,
      targets,
    };
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

function botEnvironment(options: { port: number; redisUrl: string; slack: FakeSlackApi; openai: FakeOpenAI; configPath: string }): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: 'xoxb-bench-token',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: options.slack.url,
    SLACK_BOT_USER_ID: BOT_USER_ID,
    SLACK_BOT_ID: BOT_ID,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: options.openai.baseURL,
    OPENAI_MODEL: 'gpt-4o-mini',
    OPENAI_API: 'chat',
    REDIS_URL: options.redisUrl,
    COUNTERSIGN_CONFIG: options.configPath,
    PORT: String(options.port),
    LOG_LEVEL: 'warn',
  };
}

function approver(index: number): string {
  return `UAPPROVER${String(index % 1000).padStart(4, '0')}`;
}

/** Clicks for the bare app: any signed block_actions payload is routed to its catch-all action. */
function bareClicks(count: number): RequestSpec[] {
  return Array.from({ length: count }, (_, index) =>
    clickRequest({ channel: 'CBARE0001', threadTs: '1600000000.000100', cardTs: `1600000000.${String(index).padStart(6, '0')}`, value: `step${index}:call${index}`, user: approver(index) }),
  );
}

/** BENCH_DEBUG=1: where in a burst the slow requests were sent. */
function debugRound(log: (line: string) => void, round: number, side: string, result?: LoadResult, delay?: EventLoopDelay): void {
  if (!result) return;
  const slow = result.latenciesMs
    .map((ms, index) => ({ ms, sentAt: result.sentAtMs[index] ?? Number.NaN }))
    .filter((request) => request.ms > 500)
    .map((request) => `${Math.round(request.sentAt)}→${Math.round(request.ms)}`);
  log(`[debug] round ${round} ${side}: wall ${Math.round(result.wallMs)} ms, loop p99 ${delay?.p99Ms ?? '?'} max ${delay?.maxMs ?? '?'}, slow (sent at→ms): ${slow.slice(0, 30).join(' ')}${slow.length > 30 ? ` … (${slow.length})` : ''}`);
}

interface RoundSample {
  bot: LoadResult;
  bare: LoadResult;
  botCpuMs: number;
  bareCpuMs: number;
  botLoopDelay: EventLoopDelay | undefined;
  bareLoopDelay: EventLoopDelay | undefined;
  botBreakdown: AckBreakdownSample | undefined;
  bareBreakdown: AckBreakdownSample | undefined;
}

/** Per request of a burst: ms from sending until the server had read it, and from then to the ack. */
interface AckBreakdownSample {
  waitMs: number[];
  handleMs: number[];
  /** Requests on new connections: ms from sending until the connection was accepted. */
  acceptMs: number[];
}

function breakdownSample(result: LoadResult, timings: Map<number, ServerRequestTiming>): AckBreakdownSample {
  const sample: AckBreakdownSample = { waitMs: [], handleMs: [], acceptMs: [] };
  result.sentAtMs.forEach((offset, index) => {
    const timing = timings.get(index);
    if (!timing || timing.finishedAt === undefined) return;
    const sentAt = result.startedAt + offset;
    sample.waitMs.push(Math.max(0, timing.startedAt - sentAt));
    sample.handleMs.push(timing.finishedAt - timing.startedAt);
    if (timing.acceptedAt !== undefined) sample.acceptMs.push(Math.max(0, timing.acceptedAt - sentAt));
  });
  return sample;
}

function breakdownSummary(samples: Array<AckBreakdownSample | undefined>): AckBreakdown | undefined {
  const known = samples.filter((sample): sample is AckBreakdownSample => sample !== undefined);
  if (known.length === 0) return undefined;
  const summary = (values: number[]) => {
    const sorted = [...values].sort((left, right) => left - right);
    return { p50: round(percentile(sorted, 0.5)), p99: round(percentile(sorted, 0.99)), max: round(sorted.at(-1) ?? Number.NaN) };
  };
  const accept = known.flatMap((sample) => sample.acceptMs);
  return {
    requests: known.reduce((sum, sample) => sum + sample.waitMs.length, 0),
    beforeReadMs: summary(known.flatMap((sample) => sample.waitMs)),
    readToAckMs: summary(known.flatMap((sample) => sample.handleMs)),
    newConnections: accept.length,
    ...(accept.length > 0 ? { acceptMs: summary(accept) } : {}),
  };
}

function loopDelaySummary(delays: Array<EventLoopDelay | undefined>): { p99Ms: number; maxMs: number } | undefined {
  const known = delays.filter((delay): delay is EventLoopDelay => delay !== undefined);
  if (known.length === 0) return undefined;
  return { p99Ms: round(median(known.map((delay) => delay.p99Ms))), maxMs: round(Math.max(...known.map((delay) => delay.maxMs))) };
}

function levelResult(level: number, rounds: RoundSample[]): LevelResult {
  const pooled = (pick: (round: RoundSample) => LoadResult): LatencySummary =>
    summarize(
      rounds.flatMap((round) => pick(round).latenciesMs),
      rounds.flatMap((round) => pick(round).statuses),
    );
  const bot = pooled((round) => round.bot);
  const bare = pooled((round) => round.bare);
  const perRound = rounds.map((round) => ({
    bot: summarize(round.bot.latenciesMs, round.bot.statuses),
    bare: summarize(round.bare.latenciesMs, round.bare.statuses),
  }));
  const roundRatiosP99 = perRound.map((round) => ratio(round.bot.p99, round.bare.p99));
  return {
    concurrency: level,
    rounds: rounds.length,
    bot,
    bare,
    ratioP50: ratio(median(perRound.map((round) => round.bot.p50)), median(perRound.map((round) => round.bare.p50))),
    ratioP99: round(median(roundRatiosP99)),
    roundRatiosP99,
    pooledRatioP99: ratio(bot.p99, bare.p99),
    botCpuMsPerRequest: round(rounds.reduce((sum, sample) => sum + sample.botCpuMs, 0) / Math.max(1, bot.requests)),
    bareCpuMsPerRequest: round(rounds.reduce((sum, sample) => sum + sample.bareCpuMs, 0) / Math.max(1, bare.requests)),
    ...(rounds.some((sample) => sample.botBreakdown)
      ? {
          ackBreakdown: {
            bot: breakdownSummary(rounds.map((sample) => sample.botBreakdown))!,
            bare: breakdownSummary(rounds.map((sample) => sample.bareBreakdown))!,
          },
        }
      : {}),
    ...(rounds.some((sample) => sample.botLoopDelay)
      ? {
          eventLoopDelay: {
            bot: loopDelaySummary(rounds.map((sample) => sample.botLoopDelay))!,
            bare: loopDelaySummary(rounds.map((sample) => sample.bareLoopDelay))!,
          },
        }
      : {}),
  };
}

function describeLevel(level: LevelResult): string {
  return `bot p50 ${level.bot.p50} ms p99 ${level.bot.p99} ms | bare p50 ${level.bare.p50} ms p99 ${level.bare.p99} ms | p99 ratio per round ${level.roundRatiosP99.join(', ')} (median ${level.ratioP99})`;
}

function machine(loadAverageAtStart: number[]): BenchResults['machine'] {
  let redisVersion = 'unknown';
  try {
    redisVersion = execFileSync(process.env.REDIS_SERVER_BIN ?? 'redis-server', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // Reported as unknown.
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    totalMemoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform} ${release()}`,
    redis: redisVersion,
    repository: REPOSITORY_ROOT,
    loadAverageAtStart: loadAverageAtStart.map((value) => round(value)),
    loadAverageAtEnd: loadavg().map((value) => round(value)),
  };
}
