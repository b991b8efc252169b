import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/helpers/fake-slack-api.js';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { createBurstHelpers, type BurstHelpers } from './bench-bursts.js';
import { allStarted, type CleanupStack } from './cleanup-stack.js';
import { inspectorUrl } from './inspector.js';
import type { RunPhase } from './phase-timer.js';
import { freePort, IDLE_WINDOW_MS, REPOSITORY_ROOT, startLoadGenerator, startNodeServer, waitForCpuIdle, type ChildHandle, type LoadGenerator } from './processes.js';
import {
  BENCH_CONFIG_YAML,
  BOT_ID,
  BOT_USER_ID,
  CHAT_SDK_THREAD_PREFIX,
  createSlackObserver,
  createThreadFactory,
  installModelScript,
  type ModelActivity,
  SIGNING_SECRET,
  type SlackObserver,
  type Thread,
} from './workload.js';

/** A child process serving Slack's Events API (the bot, or the bare Bolt app it is compared with). */
export interface ServerUnderTest {
  handle: ChildHandle;
  eventsUrl: string;
}

/**
 * The measured bot's processes: one all-in-one process, or with BENCH_ROLES=split a receiver (which
 * acks Slack and hands every turn off) and a worker (which runs the turns). The ack latencies are the
 * receiver's (`bot`); memory is read from the process that runs the turns, where their state lives;
 * CPU and "the work is done" waits cover every process.
 */
export interface MeasuredBot {
  /** `all-in-one process` or `receiver + worker`: what the CPU figures add up. */
  label: string;
  processes: ServerUnderTest[];
  turnRunner: {
    /** `all-in-one process` or `worker process`: whose RSS and heap are reported. */
    label: string;
    server: ServerUnderTest;
    inspectorUrl: string | undefined;
  };
}

/** Where a bot process reports its writes to Redis: the counting proxy's report port, and the proxy's port it writes to. */
export interface RedisWriteReport {
  reportPort: number;
  redisPort: number;
}

/** The servers and clients every phase talks to; none of them is measured. */
interface BenchServices {
  /** The Redis the measured bot uses. */
  redis: RedisServerHandle;
  /** A Redis of its own for the bot whose Redis traffic is counted, so nothing else is counted with it. */
  accountingRedis: RedisServerHandle;
  slack: FakeSlackApi;
  openai: FakeOpenAI;
  observer: SlackObserver;
  /** The model's slow calls in flight (turn-throughput phase). */
  modelActivity: ModelActivity;
  /** A connection to the measured bot's Redis, to read what the bot stored there. */
  redisInspector: Redis;
  loadGenerator: LoadGenerator;
  configPath: string;
}

/** Everything the phases of one run share: what is running, and how to send it work. */
export interface BenchContext extends BenchServices, BurstHelpers {
  log: (line: string) => void;
  cleanup: CleanupStack;
  bot: ServerUnderTest;
  /** With BENCH_ROLES=split, the worker process beside `bot` (a receiver) that runs its turns. */
  botWorker: ServerUnderTest | undefined;
  /** Every process of the measured bot, and the one that runs its turns. */
  measuredBot: MeasuredBot;
  /** With BENCH_ROLES=split, the worker beside the bot `startBot` started under `name`. */
  workerOf(name: string): ServerUnderTest | undefined;
  /** Until every one of these processes was idle in the same window of the run's `idleWindowMs` (its work is done). */
  waitForIdle(pids: number | readonly number[]): Promise<void>;
  bare: ServerUnderTest;
  /** The second baseline (bench/chat-sdk-bot.ts) on a Redis of its own; undefined with BENCH_CHAT_SDK=0. */
  chat: ServerUnderTest | undefined;
  /** Fresh threads for the Chat SDK bot (channels of their own, so its posts are told apart). */
  newChatThreads: (count: number) => Thread[];
  /**
   * Each process's inspector, when started with --inspect: its event-loop delay, request timings and heap
   * (the bot's: the process that serves Slack; with BENCH_ROLES=split the worker's is `measuredBot.turnRunner`'s).
   */
  botInspectorUrl: string | undefined;
  bareInspectorUrl: string | undefined;
  /** Fresh threads for the measured bot and the bare app (one sequence, so no two bursts share a thread). */
  newThreads: (count: number) => Thread[];
  /** A fresh redis-server for another bot, stopped at cleanup; its audit trail is read for the exactly-once count. */
  startRedis(): Promise<RedisServerHandle>;
  /** Every Redis a countersign bot of the run used: the measured bot's, the accounting one and those of `startRedis`. */
  botRedisUrls(): string[];
  /**
   * Starts another bot on the shared fake Slack and model; stopped at cleanup. `redisWrites`: its
   * Redis goes through a counting proxy, and each of its processes reports its writes to it (see
   * redis-write-reporter.ts).
   */
  startBot(options: { name: string; redisUrl: string; withInspector?: boolean; redisWrites?: RedisWriteReport }): Promise<ServerUnderTest>;
  /** One all-in-one process (COUNTERSIGN_ROLE=all, whatever BENCH_ROLES says) on `redisUrl`. */
  startAllInOneBot(options: { name: string; redisUrl: string }): Promise<ServerUnderTest>;
  /** A receiver and `workers` worker processes on `redisUrl` (COUNTERSIGN_ROLE); returns the receiver and the workers' handles. */
  startSplitBot(options: { name: string; redisUrl: string; workers: number }): Promise<{ receiver: ServerUnderTest; workers: ServerUnderTest[] }>;
}

/**
 * Starts Redis, the fake Slack and model and the load generator, then (as the `start processes`
 * phase) the bot and the bare app. Each is pushed on the cleanup stack as soon as it runs, so a
 * failed start still stops what had started.
 */
export async function startBenchContext(options: {
  inspect: boolean;
  cleanup: CleanupStack;
  phase: RunPhase;
  log: (line: string) => void;
  /** `waitForCpuIdle`'s window for this run (`BenchScale.idleWindowMs`; default `IDLE_WINDOW_MS`). */
  idleWindowMs?: number;
}): Promise<BenchContext> {
  const { inspect, cleanup } = options;
  const idleWindowMs = options.idleWindowMs ?? IDLE_WINDOW_MS;
  const services = await startServices(cleanup);
  // BENCH_ROLES=split: the measured process only receives (COUNTERSIGN_ROLE=receiver); a worker
  // process beside it, on the same Redis, runs the turns.
  const split = process.env.BENCH_ROLES === 'split';
  const workers = new Map<string, ServerUnderTest>();
  const botRedisUrls = [services.redis.url, services.accountingRedis.url];
  const startRedis = async () => {
    const redis = await startRedisServer();
    cleanup.push(() => redis.stop());
    botRedisUrls.push(redis.url);
    return redis;
  };
  const startBot: BenchContext['startBot'] = async ({ name, redisUrl, withInspector = false, redisWrites }) => {
    if (split) {
      workers.set(
        name,
        // With the inspector when the receiver has it: the worker's heap after a full GC is the one that holds the turns' state.
        await startServerUnderTest({
          name: `${name}-worker`,
          script: 'dist/main.js',
          withInspector,
          redisWrites,
          environment: (port) => botEnvironment({ port, redisUrl, services, role: 'worker' }),
          cleanup,
        }),
      );
    }
    return startServerUnderTest({
      name,
      script: 'dist/main.js',
      withInspector,
      redisWrites,
      environment: (port) => botEnvironment({ port, redisUrl, services, role: split ? 'receiver' : 'all' }),
      cleanup,
    });
  };
  const startAllInOneBot: BenchContext['startAllInOneBot'] = ({ name, redisUrl }) =>
    startServerUnderTest({ name, script: 'dist/main.js', withInspector: false, environment: (port) => botEnvironment({ port, redisUrl, services, role: 'all' }), cleanup });
  // The processes of one deployment start side by side: nothing is measured while they start.
  const startSplitBot: BenchContext['startSplitBot'] = async ({ name, redisUrl, workers }) => {
    const startWorker = (index: number) =>
      startServerUnderTest({ name: `${name}-worker-${index + 1}`, script: 'dist/main.js', withInspector: false, environment: (port) => botEnvironment({ port, redisUrl, services, role: 'worker' }), cleanup });
    const [receiver, ...started] = await allStarted([
      startServerUnderTest({ name: `${name}-receiver`, script: 'dist/main.js', withInspector: false, environment: (port) => botEnvironment({ port, redisUrl, services, role: 'receiver' }), cleanup }),
      ...Array.from({ length: workers }, (_, index) => startWorker(index)),
    ]);
    return { receiver, workers: started };
  };
  // Side by side, like a deployment's processes: nothing is measured while they start.
  const { bot, bare, chat } = await options.phase('start processes', async () => {
    const [bot, bare, chat] = await allStarted([
      startBot({ name: 'countersign', redisUrl: services.redis.url, withInspector: inspect }),
      startServerUnderTest({ name: 'bare-bolt', script: 'bench/bare-bolt-app.ts', withInspector: inspect, environment: (port) => bareEnvironment({ port, services }), cleanup }),
      process.env.BENCH_CHAT_SDK === '0' ? Promise.resolve(undefined) : startChatSdkBot({ services, cleanup }),
    ]);
    return { bot, bare, chat };
  });
  const botWorker = workers.get('countersign');
  const inspectorUrls = findInspectorUrls({ bot, bare, inspect });
  const measuredBot = measuredBotOf({ bot, botInspectorUrl: inspectorUrls.botInspectorUrl, worker: botWorker, workerInspectorUrl: botWorker && inspect ? requiredInspectorUrl(botWorker) : undefined });
  return {
    ...services,
    ...inspectorUrls,
    log: options.log,
    cleanup,
    bot,
    botWorker,
    measuredBot,
    workerOf: (name) => workers.get(name),
    waitForIdle: (pids) => waitForCpuIdle(pids, { windowMs: idleWindowMs }),
    bare,
    chat,
    newThreads: createThreadFactory('B'),
    newChatThreads: createThreadFactory(CHAT_SDK_THREAD_PREFIX),
    startRedis,
    botRedisUrls: () => [...botRedisUrls],
    startBot,
    startAllInOneBot,
    startSplitBot,
    ...createBurstHelpers({ loadGenerator: services.loadGenerator, observer: services.observer, botEventsUrl: bot.eventsUrl, botPids: measuredBot.processes.map((server) => server.handle.pid), idleWindowMs }),
  };
}

/** The bot's processes as the phases measure them: with a worker beside it, the worker runs the turns. */
export function measuredBotOf(options: { bot: ServerUnderTest; botInspectorUrl: string | undefined; worker: ServerUnderTest | undefined; workerInspectorUrl: string | undefined }): MeasuredBot {
  const { bot, worker } = options;
  if (!worker) return { label: 'all-in-one process', processes: [bot], turnRunner: { label: 'all-in-one process', server: bot, inspectorUrl: options.botInspectorUrl } };
  return { label: 'receiver + worker', processes: [bot, worker], turnRunner: { label: 'worker process', server: worker, inspectorUrl: options.workerInspectorUrl } };
}

async function startServices(cleanup: CleanupStack): Promise<BenchServices> {
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
  const modelActivity = installModelScript(openai);
  const observer = createSlackObserver(slack);
  const redisInspector = new Redis(redis.url, { lazyConnect: false });
  cleanup.push(() => redisInspector.quit());
  const loadGenerator = startLoadGenerator();
  cleanup.push(() => loadGenerator.stop());
  return { redis, accountingRedis, slack, openai, observer, modelActivity, redisInspector, loadGenerator, configPath };
}

const REDIS_WRITE_REPORTER = join(REPOSITORY_ROOT, 'bench/lib/redis-write-reporter.ts');

async function startServerUnderTest(options: {
  name: string;
  script: string;
  withInspector: boolean;
  redisWrites?: RedisWriteReport | undefined;
  environment: (port: number) => Record<string, string>;
  cleanup: CleanupStack;
}): Promise<ServerUnderTest> {
  const port = await freePort();
  const { redisWrites } = options;
  const handle = await startNodeServer({
    name: options.name,
    // Port 0: the inspector takes a free port and prints its URL, which findInspectorUrls reads.
    // --require, not --import: a preload given so also runs in the process's worker threads (the bot thread).
    args: [...(options.withInspector ? ['--inspect=127.0.0.1:0'] : []), ...(redisWrites ? ['--require', REDIS_WRITE_REPORTER] : []), ...botNodeFlags(options.script), options.script],
    port,
    env: { ...options.environment(port), ...(redisWrites ? { BENCH_REDIS_PORT: String(redisWrites.redisPort), BENCH_REDIS_WRITES_PORT: String(redisWrites.reportPort) } : {}) },
  });
  options.cleanup.push(() => handle.stop());
  return { handle, eventsUrl: `${handle.url}/slack/events` };
}

function findInspectorUrls(options: { bot: ServerUnderTest; bare: ServerUnderTest; inspect: boolean }): Pick<BenchContext, 'botInspectorUrl' | 'bareInspectorUrl'> {
  if (!options.inspect) return { botInspectorUrl: undefined, bareInspectorUrl: undefined };
  return { botInspectorUrl: requiredInspectorUrl(options.bot), bareInspectorUrl: requiredInspectorUrl(options.bare) };
}

function requiredInspectorUrl(server: ServerUnderTest): string {
  const url = inspectorUrl(server.handle.startupOutput);
  if (!url) throw new Error(`${server.handle.name} was started with --inspect but its start-up output has no inspector URL`);
  return url;
}

function botEnvironment(options: { port: number; redisUrl: string; services: BenchServices; role: 'all' | 'receiver' | 'worker' }): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: 'xoxb-bench-token',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: options.services.slack.url,
    SLACK_BOT_USER_ID: BOT_USER_ID,
    SLACK_BOT_ID: BOT_ID,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: options.services.openai.baseURL,
    OPENAI_MODEL: 'gpt-4o-mini',
    OPENAI_API: 'chat',
    REDIS_URL: options.redisUrl,
    COUNTERSIGN_CONFIG: options.services.configPath,
    PORT: String(options.port),
    LOG_LEVEL: 'warn',
    COUNTERSIGN_ROLE: options.role,
    // BENCH_SLACK_FRONT=inline|thread: how the processes that serve Slack do it (default: the bot's default, thread).
    ...(process.env.BENCH_SLACK_FRONT && options.role !== 'worker' ? { COUNTERSIGN_SLACK_FRONT: process.env.BENCH_SLACK_FRONT } : {}),
    // BENCH_TURN_THREAD_NICE=0…19: the bot thread's nice (COUNTERSIGN_TURN_THREAD_NICE) in the processes that serve Slack.
    ...(process.env.BENCH_TURN_THREAD_NICE && options.role !== 'worker' ? { COUNTERSIGN_TURN_THREAD_NICE: process.env.BENCH_TURN_THREAD_NICE } : {}),
    // BENCH_PROFILE=<dir>: each bot process writes a V8 CPU profile there when it stops (open in Chrome DevTools).
    ...(process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {}),
    // BENCH_PERF=1: JIT symbols for Linux perf (`perf record -e cpu-clock -g -p <bot pid>`), which samples
    // on-CPU time only; a V8 profile also counts time the thread waited, runnable, for a core.
    ...(process.env.BENCH_PERF === '1' ? { NODE_OPTIONS: '--perf-basic-prof-only-functions --interpreted-frames-native-stack' } : {}),
    // BENCH_BOT_ENV="NAME=value …": more settings for every bot process (A/B runs of a setting).
    ...Object.fromEntries((process.env.BENCH_BOT_ENV?.trim().split(/\s+/) ?? []).filter((pair) => pair.indexOf('=') > 0).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])),
  };
}

/** BENCH_NODE_FLAGS: Node flags for the bot's processes only (A/B runs of V8 settings, `--trace-gc`). */
function botNodeFlags(script: string): string[] {
  const flags = process.env.BENCH_NODE_FLAGS?.trim();
  return script === 'dist/main.js' && flags ? flags.split(/\s+/) : [];
}

/** The Chat SDK bot, with a Redis of its own so its state traffic does not mix with the bot's. */
async function startChatSdkBot(options: { services: BenchServices; cleanup: CleanupStack }): Promise<ServerUnderTest> {
  const redis = await startRedisServer();
  options.cleanup.push(() => redis.stop());
  return startServerUnderTest({
    name: 'chat-sdk',
    script: 'bench/chat-sdk-bot.ts',
    withInspector: false,
    environment: (port) => ({ PORT: String(port), SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: options.services.slack.url, REDIS_URL: redis.url }),
    cleanup: options.cleanup,
  });
}

/** The bare app needs only what Bolt itself needs: the signing secret and where Slack is. */
function bareEnvironment(options: { port: number; services: BenchServices }): Record<string, string> {
  return { PORT: String(options.port), SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: options.services.slack.url, SLACK_BOT_USER_ID: BOT_USER_ID, SLACK_BOT_ID: BOT_ID };
}
