import { existsSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, type ConfigProblem } from './config-error.js';
import { describeRedisTarget, parseRedisTarget, type RedisTarget } from './redis-target.js';
import { findUnknownVariables } from './unknown-environment-variables.js';
import { hasUrlCredentials } from './url-credentials.js';

export type OpenAiApi = 'responses' | 'chat';
/**
 * `native`: Slack's own streaming (the app needs the Agents & AI Apps feature); falls back to
 * `update` for good if Slack refuses. `update`: a message edited about once a second.
 */
export type AnswerStreaming = 'native' | 'update';
/**
 * What this process does. `all`: receives Slack requests and runs turns. `receiver`: verifies,
 * records and acks Slack requests, and hands turns to the workers through Redis. `worker`: runs
 * turns handed off by receivers (and any work a stopped process left); it serves only `/healthz`
 * and `/metrics`.
 */
export type BotRole = 'all' | 'receiver' | 'worker';
/** Where Slack's HTTP requests are served: see `EnvironmentConfig.slackFront`. */
export type SlackFront = 'inline' | 'thread';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface EnvironmentConfig {
  slack: {
    botToken: string;
    /** Required in HTTP mode; Socket Mode does not sign requests. */
    signingSecret?: string;
    /** Set means Socket Mode. */
    appToken?: string;
    socketMode: boolean;
    /** Base of the Slack Web API, always ending in `/`. */
    apiUrl?: string;
    /** With `botId`, lets Bolt skip the `auth.test` call at start-up. */
    botUserId?: string;
    botId?: string;
    port: number;
    /** How answers are shown while the model writes them. */
    streaming: AnswerStreaming;
  };
  /**
   * METRICS_PORT, METRICS_HOST: where `GET /metrics` (and a copy of `/healthz`) is served on a
   * listener of its own; see `metricsPlacement` for what happens when the port is unset. Optional
   * for environments built by hand (`createBot({ environment })`): absent is both unset.
   */
  metrics?: { port?: number; host?: string };
  openai: {
    apiKey: string;
    /** Any OpenAI-compatible server (vLLM, Ollama, LiteLLM). */
    baseUrl?: string;
    model: string;
    /** `chat` for servers that lack the Responses API. */
    api: OpenAiApi;
  };
  /** Unset means an in-memory store: state is lost on restart and not shared between replicas. */
  redisUrl?: string;
  /** `redisUrl` read: one server, a Cluster or a Sentinel-watched primary. Set whenever `redisUrl` is. */
  redis?: RedisTarget;
  /** COUNTERSIGN_REDIS_SHARDS: slot groups of the keyspace (see `store/redis-keys.ts`); unset means the default. */
  redisShards?: number;
  /**
   * COUNTERSIGN_REDIS_WAIT_REPLICAS: replicas that must have a call's executing marker before the
   * call starts (of those connected to the primary); unset means the store's default (1 behind
   * Sentinel or in a Cluster, else 0).
   */
  redisWaitReplicas?: number;
  /** COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS: how long the marker waits for them; unset means the store's default. */
  redisWaitTimeoutMs?: number;
  /** Unset means the built-in defaults. */
  configPath?: string;
  logLevel: LogLevel;
  role: BotRole;
  /**
   * COUNTERSIGN_SLACK_FRONT: `thread` serves Slack's HTTP requests from a thread of their own that
   * verifies and acks, and runs the bot (decisions, cards, turns) on a second thread, so an ack never
   * waits behind them; `inline` serves them on the event loop that runs everything. Default: `thread`
   * in HTTP mode for a process that serves Slack, `inline` otherwise (Socket Mode, workers).
   */
  slackFront: SlackFront;
  /** Operational knobs, rarely changed; unset ones take `createBot`'s defaults. */
  tuning: EnvironmentTuning;
  /**
   * COUNTERSIGN_* variables set that countersign does not read and that are no near-miss of one it
   * does (those are refused): logged at start-up. Absent: none.
   */
  ignoredVariables?: string[];
}

export interface EnvironmentTuning {
  /** COUNTERSIGN_SWEEP_INTERVAL_MS: how often each process sweeps for expiries and stalled work. */
  sweepIntervalMs?: number;
  /** COUNTERSIGN_LOCK_TTL_MS: how long a dead process's thread lock blocks its work. */
  lockTtlMs?: number;
  /** COUNTERSIGN_MAX_CONCURRENT_TURNS. */
  maxConcurrentTurns?: number;
  /** COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS. */
  maxEventLoopDelayMs?: number;
  /** COUNTERSIGN_COMMAND_SPAWNER (`on`, the default, or `off`): whether a small spawner process starts command tools. */
  commandSpawner?: boolean;
  /** COUNTERSIGN_MAX_RUNNING_COMMANDS: command tools running at once in one process, at most. */
  maxRunningCommands?: number;
  /** COUNTERSIGN_TURN_THREAD_NICE: the CPU priority (Linux nice, 0–19) of the bot thread behind the Slack front. */
  turnThreadNice?: number;
}

export interface ParseEnvironmentOptions {
  /** Decides whether the default config file is there; injectable so tests do not touch the disk. */
  fileExists?: (path: string) => boolean;
}

export const DEFAULT_PORT = 3000;
export const DEFAULT_OPENAI_MODEL = 'gpt-5-mini';
export const DEFAULT_CONFIG_PATH = './countersign.yml';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const satisfies readonly LogLevel[];
const OPENAI_APIS = ['responses', 'chat'] as const satisfies readonly OpenAiApi[];
const STREAMING_MODES = ['update', 'native'] as const satisfies readonly AnswerStreaming[];
const ROLES = ['all', 'receiver', 'worker'] as const satisfies readonly BotRole[];
const SLACK_FRONTS = ['inline', 'thread'] as const satisfies readonly SlackFront[];

/** Mirrors `MAX_REDIS_SHARDS` in store/redis-keys.ts (config does not import the store). */
const MAX_REDIS_SHARDS = 1_024;

const required = (what: string) => z.string({ error: `is required (${what})` });
const choice = <CHOICES extends readonly [string, ...string[]]>(choices: CHOICES) => z.enum(choices, { error: `must be one of ${choices.join(', ')}` });
/** Choices people type in any case (`LOG_LEVEL=DEBUG`). */
const lowerCaseChoice = <CHOICES extends readonly [string, ...string[]]>(choices: CHOICES) => z.string().toLowerCase().pipe(choice(choices));
const url = (protocols: readonly string[]) =>
  z.string().refine((value) => protocols.includes(URL.parse(value)?.protocol ?? ''), {
    error: `must be a URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}`,
  });
/** The lowest CPU priority Linux has (nice 19). */
const MAX_NICE = 19;

const port = () =>
  z
    .string()
    .refine((value) => /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 65_535, { error: 'must be an integer from 1 to 65535' })
    .transform(Number);

/**
 * A whole number from `minimum` to `maximum`: the knobs that end up in a timer or a Redis wait.
 * Node cannot time more than 2^31-1 ms and fires such a timer after 1 ms instead, so an unbounded
 * "practically never" would sweep or heartbeat every millisecond.
 */
const bounded = (options: { minimum: number; maximum: number; unit: string; meaning?: string }) =>
  z
    .string()
    .refine((value) => /^\d+$/.test(value) && Number(value) >= options.minimum && Number(value) <= options.maximum, {
      error: `must be a whole number of ${options.unit} from ${options.minimum} to ${options.maximum}${options.meaning === undefined ? '' : ` (${options.meaning})`}`,
    })
    .transform(Number);

/** The sweep interval and the thread lock's lifetime: a day is already far past any useful setting. */
const MAX_TIMER_KNOB_MS = 86_400_000;
/** A call's start holds for this wait; a minute is already far past a healthy replica's lag. */
const MAX_REDIS_WAIT_TIMEOUT_MS = 60_000;
/** More replicas than any deployment has: a larger count only makes every call wait out the timeout. */
const MAX_REDIS_WAIT_REPLICAS = 100;
/**
 * The load gate's limits. Bounded like the others so `1e300` or `0x10` is refused instead of read as a
 * number: a delay past ten minutes means the gate never trips (100000 opens it wide, as benchmarks do),
 * and a turn or command count past these is no limit at all (the defaults are 1000 turns and 32 commands).
 */
const MAX_CONCURRENT_TURNS = 100_000;
const MAX_EVENT_LOOP_DELAY_MS = 600_000;
const MAX_RUNNING_COMMANDS = 10_000;

/**
 * Every variable countersign reads, in the order problems are reported. Values are trimmed and
 * blank ones removed first (`.env` files write `NAME=` for "unset"), so each is a string or absent.
 * Messages name the variable but never echo its value: a mistyped token must not reach the logs.
 */
const environmentSchema = z.object({
  SLACK_BOT_TOKEN: required('the bot token, xoxb-...').startsWith('xoxb-', { error: 'must start with xoxb- (a bot token, not a user or app token)' }),
  SLACK_APP_TOKEN: z.string().startsWith('xapp-', { error: 'must start with xapp- (an app-level token with connections:write)' }).optional(),
  SLACK_SIGNING_SECRET: z.string().optional(),
  SLACK_API_URL: url(['http:', 'https:']).optional(),
  PORT: port().optional(),
  METRICS_PORT: port().optional(),
  METRICS_HOST: z
    .string()
    .regex(/^(?:[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?)$/, { error: 'must be a host name or an IP address to listen on (no scheme, no port), e.g. 0.0.0.0 or 127.0.0.1' })
    .transform((value) => value.replace(/^\[(.*)\]$/, '$1'))
    .optional(),
  SLACK_BOT_USER_ID: z.string().regex(/^[UW][A-Z0-9]+$/, { error: 'must be a Slack user id (U... or W...)' }).optional(),
  SLACK_BOT_ID: z.string().regex(/^B[A-Z0-9]+$/, { error: 'must be a Slack bot id (B...)' }).optional(),
  OPENAI_API_KEY: required('use any placeholder if your OpenAI-compatible server ignores it'),
  OPENAI_BASE_URL: url(['http:', 'https:'])
    .refine((value) => !hasUrlCredentials(value), {
      error: 'must not contain credentials (user:password@): they are never sent, and an error quoting the URL would show them; give the key as OPENAI_API_KEY (sent as the Authorization header) instead',
    })
    .optional(),
  OPENAI_MODEL: z.string().default(DEFAULT_OPENAI_MODEL),
  OPENAI_API: choice(OPENAI_APIS).default('responses'),
  SLACK_STREAMING: lowerCaseChoice(STREAMING_MODES).default('update'),
  // One server, a Cluster or a Sentinel-watched primary (config/redis-target.ts says which forms).
  REDIS_URL: z
    .string()
    .transform((value, context) => {
      const target = parseRedisTarget(value);
      if ('problem' in target) {
        context.addIssue({ code: 'custom', message: target.problem });
        return z.NEVER;
      }
      return { url: value, target };
    })
    .optional(),
  COUNTERSIGN_REDIS_SHARDS: z
    .string()
    .refine((value) => /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_REDIS_SHARDS, {
      error: `must be a whole number from 1 to ${MAX_REDIS_SHARDS} (and the same in every process sharing the Redis)`,
    })
    .transform(Number)
    .optional(),
  COUNTERSIGN_REDIS_WAIT_REPLICAS: z
    .string()
    .refine((value) => /^\d+$/.test(value) && Number(value) <= MAX_REDIS_WAIT_REPLICAS, {
      error: `must be a whole number of replicas from 0 to ${MAX_REDIS_WAIT_REPLICAS} (0: a call starts once the primary has its marker)`,
    })
    .transform(Number)
    .optional(),
  COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS: bounded({ minimum: 1, maximum: MAX_REDIS_WAIT_TIMEOUT_MS, unit: 'milliseconds', meaning: 'a minute' }).optional(),
  COUNTERSIGN_CONFIG: z.string().optional(),
  LOG_LEVEL: lowerCaseChoice(LOG_LEVELS).default('info'),
  COUNTERSIGN_ROLE: lowerCaseChoice(ROLES).default('all'),
  COUNTERSIGN_SLACK_FRONT: lowerCaseChoice(SLACK_FRONTS).optional(),
  COUNTERSIGN_SWEEP_INTERVAL_MS: bounded({ minimum: 10, maximum: MAX_TIMER_KNOB_MS, unit: 'milliseconds', meaning: 'a day' }).optional(),
  COUNTERSIGN_LOCK_TTL_MS: bounded({ minimum: 10, maximum: MAX_TIMER_KNOB_MS, unit: 'milliseconds', meaning: 'a day' }).optional(),
  COUNTERSIGN_MAX_CONCURRENT_TURNS: bounded({ minimum: 1, maximum: MAX_CONCURRENT_TURNS, unit: 'turns' }).optional(),
  COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS: bounded({ minimum: 10, maximum: MAX_EVENT_LOOP_DELAY_MS, unit: 'milliseconds', meaning: 'ten minutes' }).optional(),
  COUNTERSIGN_COMMAND_SPAWNER: lowerCaseChoice(['on', 'off'] as const).optional(),
  COUNTERSIGN_MAX_RUNNING_COMMANDS: bounded({ minimum: 1, maximum: MAX_RUNNING_COMMANDS, unit: 'commands' }).optional(),
  COUNTERSIGN_TURN_THREAD_NICE: z
    .string()
    .refine((value) => /^\d+$/.test(value) && Number(value) <= MAX_NICE, { error: `must be a whole number from 0 (the front's priority) to ${MAX_NICE} (the lowest)` })
    .transform(Number)
    .optional(),
});

type EnvironmentVariable = keyof typeof environmentSchema.shape;
const VARIABLES = Object.keys(environmentSchema.shape) as EnvironmentVariable[];
/** The names of every variable countersign reads (the entry asks which Slack ones are set). */
export const ENVIRONMENT_VARIABLES: readonly string[] = VARIABLES;

/**
 * Reads and checks the process environment. Every problem is collected before throwing, field by
 * field (zod), across fields (`crossFieldProblems`) and a misspelled COUNTERSIGN_* name
 * (`findUnknownVariables`), and listed in the schema's order, misspellings last.
 */
export function parseEnvironment(env: Record<string, string | undefined>, options: ParseEnvironmentOptions = {}): EnvironmentConfig {
  const given = readVariables(env);
  const result = environmentSchema.safeParse(given);
  const fieldProblems: ConfigProblem[] = result.success ? [] : result.error.issues.map((issue) => ({ field: String(issue.path[0] ?? 'environment'), message: issue.message }));
  const unknown = findUnknownVariables(env, ENVIRONMENT_VARIABLES);
  const problems = [...fieldProblems, ...crossFieldProblems(given, fieldProblems), ...unknown.problems];
  if (!result.success || problems.length > 0) {
    // A stable sort: a variable's own problems stay in the order they were found.
    const order = (problem: ConfigProblem) => {
      const index = VARIABLES.indexOf(problem.field as EnvironmentVariable);
      return index === -1 ? VARIABLES.length : index;
    };
    throw new ConfigError({ problems: problems.sort((a, b) => order(a) - order(b)) });
  }
  const variables = result.data;
  const configPath = variables.COUNTERSIGN_CONFIG ?? defaultConfigPath(options.fileExists ?? existsSync);
  const apiUrl = variables.SLACK_API_URL;
  const tuning: EnvironmentTuning = {
    ...(variables.COUNTERSIGN_SWEEP_INTERVAL_MS === undefined ? {} : { sweepIntervalMs: variables.COUNTERSIGN_SWEEP_INTERVAL_MS }),
    ...(variables.COUNTERSIGN_LOCK_TTL_MS === undefined ? {} : { lockTtlMs: variables.COUNTERSIGN_LOCK_TTL_MS }),
    ...(variables.COUNTERSIGN_MAX_CONCURRENT_TURNS === undefined ? {} : { maxConcurrentTurns: variables.COUNTERSIGN_MAX_CONCURRENT_TURNS }),
    ...(variables.COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS === undefined ? {} : { maxEventLoopDelayMs: variables.COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS }),
    ...(variables.COUNTERSIGN_COMMAND_SPAWNER === undefined ? {} : { commandSpawner: variables.COUNTERSIGN_COMMAND_SPAWNER === 'on' }),
    ...(variables.COUNTERSIGN_MAX_RUNNING_COMMANDS === undefined ? {} : { maxRunningCommands: variables.COUNTERSIGN_MAX_RUNNING_COMMANDS }),
    ...(variables.COUNTERSIGN_TURN_THREAD_NICE === undefined ? {} : { turnThreadNice: variables.COUNTERSIGN_TURN_THREAD_NICE }),
  };
  return {
    slack: {
      botToken: variables.SLACK_BOT_TOKEN,
      ...(variables.SLACK_SIGNING_SECRET !== undefined && { signingSecret: variables.SLACK_SIGNING_SECRET }),
      ...(variables.SLACK_APP_TOKEN !== undefined && { appToken: variables.SLACK_APP_TOKEN }),
      socketMode: variables.SLACK_APP_TOKEN !== undefined,
      ...(apiUrl !== undefined && { apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` }),
      ...(variables.SLACK_BOT_USER_ID !== undefined && { botUserId: variables.SLACK_BOT_USER_ID }),
      ...(variables.SLACK_BOT_ID !== undefined && { botId: variables.SLACK_BOT_ID }),
      port: variables.PORT ?? DEFAULT_PORT,
      streaming: variables.SLACK_STREAMING,
    },
    metrics: {
      ...(variables.METRICS_PORT !== undefined && { port: variables.METRICS_PORT }),
      ...(variables.METRICS_HOST !== undefined && { host: variables.METRICS_HOST }),
    },
    openai: {
      apiKey: variables.OPENAI_API_KEY,
      ...(variables.OPENAI_BASE_URL !== undefined && { baseUrl: variables.OPENAI_BASE_URL }),
      model: variables.OPENAI_MODEL,
      api: variables.OPENAI_API,
    },
    ...(variables.REDIS_URL !== undefined && { redisUrl: variables.REDIS_URL.url, redis: variables.REDIS_URL.target }),
    ...(variables.COUNTERSIGN_REDIS_SHARDS !== undefined && { redisShards: variables.COUNTERSIGN_REDIS_SHARDS }),
    ...(variables.COUNTERSIGN_REDIS_WAIT_REPLICAS !== undefined && { redisWaitReplicas: variables.COUNTERSIGN_REDIS_WAIT_REPLICAS }),
    ...(variables.COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS !== undefined && { redisWaitTimeoutMs: variables.COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS }),
    ...(configPath !== undefined && { configPath }),
    logLevel: variables.LOG_LEVEL,
    role: variables.COUNTERSIGN_ROLE,
    slackFront: variables.COUNTERSIGN_SLACK_FRONT ?? (variables.SLACK_APP_TOKEN === undefined && variables.COUNTERSIGN_ROLE !== 'worker' ? 'thread' : 'inline'),
    tuning,
    ...(unknown.ignored.length > 0 && { ignoredVariables: unknown.ignored }),
  };
}

/** The variables countersign knows, trimmed, with blank ones left out. */
function readVariables(env: Record<string, string | undefined>): Partial<Record<EnvironmentVariable, string>> {
  const given: Partial<Record<EnvironmentVariable, string>> = {};
  for (const name of VARIABLES) {
    const value = env[name]?.trim();
    if (value !== undefined && value !== '') given[name] = value;
  }
  return given;
}

/** Rules that join variables; checked even when single variables are wrong, so every problem is listed at once. */
function crossFieldProblems(given: Partial<Record<EnvironmentVariable, string>>, fieldProblems: readonly ConfigProblem[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const wrong = (field: EnvironmentVariable) => fieldProblems.some((problem) => problem.field === field);
  if (given.SLACK_SIGNING_SECRET === undefined && given.SLACK_APP_TOKEN === undefined) {
    problems.push({ field: 'SLACK_SIGNING_SECRET', message: 'is required in HTTP mode (set SLACK_APP_TOKEN to use Socket Mode instead)' });
  }
  // Bolt only skips auth.test when it knows both; one alone is almost certainly a forgotten line.
  if (given.SLACK_BOT_USER_ID !== undefined && given.SLACK_BOT_ID === undefined) problems.push({ field: 'SLACK_BOT_ID', message: 'must be set together with SLACK_BOT_USER_ID' });
  if (given.SLACK_BOT_ID !== undefined && given.SLACK_BOT_USER_ID === undefined) problems.push({ field: 'SLACK_BOT_USER_ID', message: 'must be set together with SLACK_BOT_ID' });
  if (given.METRICS_HOST !== undefined && !wrong('METRICS_PORT')) {
    if (given.METRICS_PORT === undefined) problems.push({ field: 'METRICS_HOST', message: 'is where the METRICS_PORT listener binds: set METRICS_PORT too' });
    else if (Number(given.METRICS_PORT) === Number(given.PORT ?? DEFAULT_PORT)) {
      problems.push({ field: 'METRICS_HOST', message: 'applies to a port of its own, but METRICS_PORT is PORT: unset METRICS_HOST or give METRICS_PORT another port' });
    }
  }
  // Receivers and workers meet only in Redis; without it a receiver's work would never run.
  const role = given.COUNTERSIGN_ROLE?.toLowerCase();
  if (role !== undefined && role !== 'all' && !wrong('COUNTERSIGN_ROLE') && given.REDIS_URL === undefined) {
    problems.push({ field: 'COUNTERSIGN_ROLE', message: `${role} needs REDIS_URL: receivers hand turns to workers through Redis` });
  }
  if (given.COUNTERSIGN_SLACK_FRONT?.toLowerCase() === 'thread') {
    if (given.SLACK_APP_TOKEN !== undefined) problems.push({ field: 'COUNTERSIGN_SLACK_FRONT', message: "thread serves Slack's HTTP requests; Socket Mode (SLACK_APP_TOKEN) has none" });
    if (role === 'worker') problems.push({ field: 'COUNTERSIGN_SLACK_FRONT', message: 'thread serves Slack requests, which a worker (COUNTERSIGN_ROLE=worker) does not' });
  }
  return problems;
}

/**
 * A summary safe to log at start-up: secrets become `[set]`, and credentials embedded in URLs
 * (a Redis password, a proxy's user:pass) are masked too.
 */
export type EnvironmentSummary = ReturnType<typeof describeEnvironment>;

export function describeEnvironment(config: EnvironmentConfig) {
  const secret = (value: string | undefined) => (value === undefined ? undefined : '[set]');
  return {
    slack: {
      botToken: secret(config.slack.botToken),
      signingSecret: secret(config.slack.signingSecret),
      appToken: secret(config.slack.appToken),
      socketMode: config.slack.socketMode,
      apiUrl: maskUrlCredentials(config.slack.apiUrl),
      botUserId: config.slack.botUserId,
      botId: config.slack.botId,
      port: config.slack.port,
      streaming: config.slack.streaming,
    },
    metrics: config.metrics,
    openai: {
      apiKey: secret(config.openai.apiKey),
      baseUrl: maskUrlCredentials(config.openai.baseUrl),
      model: config.openai.model,
      api: config.openai.api,
    },
    // The whole Redis URL is treated as secret: it usually carries the password.
    redisUrl: secret(config.redisUrl),
    redis: config.redis === undefined ? undefined : describeRedisTarget(config.redis),
    redisShards: config.redisShards,
    redisWaitReplicas: config.redisWaitReplicas,
    redisWaitTimeoutMs: config.redisWaitTimeoutMs,
    configPath: config.configPath,
    logLevel: config.logLevel,
    role: config.role,
    slackFront: config.slackFront,
  };
}

function defaultConfigPath(fileExists: (path: string) => boolean): string | undefined {
  return fileExists(DEFAULT_CONFIG_PATH) ? DEFAULT_CONFIG_PATH : undefined;
}

function maskUrlCredentials(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const url = URL.parse(value);
  if (url === null || (url.username === '' && url.password === '')) return value;
  url.username = '[masked]';
  url.password = '';
  return url.toString();
}
