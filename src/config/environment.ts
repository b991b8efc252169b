import { existsSync } from 'node:fs';
import { ConfigError, type ConfigProblem } from './config-error.js';
import { describeRedisTarget, parseRedisTarget, type RedisTarget } from './redis-target.js';

export type OpenAiApi = 'responses' | 'chat';
/**
 * `native`: Slack's own streaming (the app needs the Agents & AI Apps feature); falls back to
 * `update` for good if Slack refuses. `update`: a message edited about once a second.
 */
export type AnswerStreaming = 'native' | 'update';
/**
 * What this process does. `all`: receives Slack requests and runs turns. `receiver`: verifies,
 * records and acks Slack requests, and hands turns to the workers through Redis. `worker`: runs
 * turns handed off by receivers (and any work a stopped process left); it serves only `/healthz`.
 */
export type BotRole = 'all' | 'receiver' | 'worker';
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
  /** Unset means the built-in defaults. */
  configPath?: string;
  logLevel: LogLevel;
  role: BotRole;
  /** Operational knobs, rarely changed; unset ones take `createBot`'s defaults. */
  tuning: EnvironmentTuning;
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
}

export interface ParseEnvironmentOptions {
  /** Decides whether the default config file is there; injectable so tests do not touch the disk. */
  fileExists?: (path: string) => boolean;
}

export const DEFAULT_PORT = 3000;
export const DEFAULT_OPENAI_MODEL = 'gpt-5-mini';
export const DEFAULT_CONFIG_PATH = './countersign.yml';

const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const OPENAI_APIS: readonly OpenAiApi[] = ['responses', 'chat'];
const STREAMING_MODES: readonly AnswerStreaming[] = ['update', 'native'];
const ROLES: readonly BotRole[] = ['all', 'receiver', 'worker'];
/** Mirrors `MAX_REDIS_SHARDS` in store/redis-keys.ts (config does not import the store). */
const MAX_REDIS_SHARDS = 1_024;

/**
 * Reads and checks the process environment. Every problem is collected before throwing, and
 * messages name variables but never echo their values: a mistyped token must not reach the logs.
 */
export function parseEnvironment(
  env: Record<string, string | undefined>,
  options: ParseEnvironmentOptions = {},
): EnvironmentConfig {
  const problems: ConfigProblem[] = [];
  const read = (name: string): string | undefined => {
    // `.env` files often carry `NAME=` for "unset"; treat blank as absent rather than invalid.
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const problem = (field: string, message: string) => problems.push({ field, message });

  const botToken = read('SLACK_BOT_TOKEN');
  if (botToken === undefined) problem('SLACK_BOT_TOKEN', 'is required (the bot token, xoxb-...)');
  else if (!botToken.startsWith('xoxb-')) problem('SLACK_BOT_TOKEN', 'must start with xoxb- (a bot token, not a user or app token)');

  const appToken = read('SLACK_APP_TOKEN');
  const socketMode = appToken !== undefined;
  if (appToken !== undefined && !appToken.startsWith('xapp-')) {
    problem('SLACK_APP_TOKEN', 'must start with xapp- (an app-level token with connections:write)');
  }

  const signingSecret = read('SLACK_SIGNING_SECRET');
  if (signingSecret === undefined && !socketMode) {
    problem('SLACK_SIGNING_SECRET', 'is required in HTTP mode (set SLACK_APP_TOKEN to use Socket Mode instead)');
  }

  const apiUrl = readUrl({ name: 'SLACK_API_URL', value: read('SLACK_API_URL'), protocols: ['http:', 'https:'], problem });
  const port = readPort(read('PORT'), problem);

  const botUserId = read('SLACK_BOT_USER_ID');
  const botId = read('SLACK_BOT_ID');
  if (botUserId !== undefined && !/^[UW][A-Z0-9]+$/.test(botUserId)) problem('SLACK_BOT_USER_ID', 'must be a Slack user id (U... or W...)');
  if (botId !== undefined && !/^B[A-Z0-9]+$/.test(botId)) problem('SLACK_BOT_ID', 'must be a Slack bot id (B...)');
  // Bolt only skips auth.test when it knows both; one alone is almost certainly a forgotten line.
  if (botUserId !== undefined && botId === undefined) problem('SLACK_BOT_ID', 'must be set together with SLACK_BOT_USER_ID');
  if (botId !== undefined && botUserId === undefined) problem('SLACK_BOT_USER_ID', 'must be set together with SLACK_BOT_ID');

  const apiKey = read('OPENAI_API_KEY');
  if (apiKey === undefined) problem('OPENAI_API_KEY', 'is required (use any placeholder if your OpenAI-compatible server ignores it)');
  const baseUrl = readUrl({ name: 'OPENAI_BASE_URL', value: read('OPENAI_BASE_URL'), protocols: ['http:', 'https:'], problem });
  const model = read('OPENAI_MODEL') ?? DEFAULT_OPENAI_MODEL;
  const api = readChoice({ name: 'OPENAI_API', value: read('OPENAI_API'), choices: OPENAI_APIS, fallback: 'responses', problem });
  const streaming = readChoice({ name: 'SLACK_STREAMING', value: read('SLACK_STREAMING')?.toLowerCase(), choices: STREAMING_MODES, fallback: 'update', problem });

  const redisUrl = read('REDIS_URL');
  const redis = redisUrl === undefined ? undefined : parseRedisTarget(redisUrl);
  if (redis !== undefined && 'problem' in redis) problem('REDIS_URL', redis.problem);
  const redisShardsText = read('COUNTERSIGN_REDIS_SHARDS');
  const redisShards = redisShardsText === undefined ? undefined : Number(redisShardsText);
  if (redisShards !== undefined && !(/^\d+$/.test(redisShardsText ?? '') && redisShards >= 1 && redisShards <= MAX_REDIS_SHARDS)) {
    problem('COUNTERSIGN_REDIS_SHARDS', `must be a whole number from 1 to ${MAX_REDIS_SHARDS} (and the same in every process sharing the Redis)`);
  }
  const configPath = read('COUNTERSIGN_CONFIG') ?? defaultConfigPath(options.fileExists ?? existsSync);
  const logLevel = readChoice({ name: 'LOG_LEVEL', value: read('LOG_LEVEL')?.toLowerCase(), choices: LOG_LEVELS, fallback: 'info', problem });
  const role = readChoice({ name: 'COUNTERSIGN_ROLE', value: read('COUNTERSIGN_ROLE')?.toLowerCase(), choices: ROLES, fallback: 'all', problem });
  // Receivers and workers meet only in Redis; without it a receiver's work would never run.
  if (role !== 'all' && redisUrl === undefined && !problems.some((entry) => entry.field === 'REDIS_URL')) problem('COUNTERSIGN_ROLE', `${role} needs REDIS_URL: receivers hand turns to workers through Redis`);

  const whole = (name: string, minimum: number, unit: string): number | undefined => {
    const value = read(name);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (Number.isInteger(parsed) && parsed >= minimum) return parsed;
    problem(name, `must be a whole number of ${unit}, at least ${minimum}`);
    return undefined;
  };
  const tuning: EnvironmentTuning = Object.fromEntries(
    Object.entries({
      sweepIntervalMs: whole('COUNTERSIGN_SWEEP_INTERVAL_MS', 10, 'milliseconds'),
      lockTtlMs: whole('COUNTERSIGN_LOCK_TTL_MS', 10, 'milliseconds'),
      maxConcurrentTurns: whole('COUNTERSIGN_MAX_CONCURRENT_TURNS', 1, 'turns'),
      maxEventLoopDelayMs: whole('COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS', 10, 'milliseconds'),
    }).filter(([, value]) => value !== undefined),
  );

  if (problems.length > 0 || botToken === undefined || apiKey === undefined) throw new ConfigError({ problems });

  return {
    slack: {
      botToken,
      ...(signingSecret !== undefined && { signingSecret }),
      ...(appToken !== undefined && { appToken }),
      socketMode,
      ...(apiUrl !== undefined && { apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` }),
      ...(botUserId !== undefined && { botUserId }),
      ...(botId !== undefined && { botId }),
      port,
      streaming,
    },
    openai: { apiKey, ...(baseUrl !== undefined && { baseUrl }), model, api },
    ...(redisUrl !== undefined && redis !== undefined && !('problem' in redis) && { redisUrl, redis }),
    ...(redisShards !== undefined && { redisShards }),
    ...(configPath !== undefined && { configPath }),
    logLevel,
    role,
    tuning,
  };
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
    configPath: config.configPath,
    logLevel: config.logLevel,
    role: config.role,
  };
}

function defaultConfigPath(fileExists: (path: string) => boolean): string | undefined {
  return fileExists(DEFAULT_CONFIG_PATH) ? DEFAULT_CONFIG_PATH : undefined;
}

function readUrl({
  name,
  value,
  protocols,
  problem,
}: {
  name: string;
  value: string | undefined;
  protocols: string[];
  problem: (field: string, message: string) => void;
}): string | undefined {
  if (value === undefined) return undefined;
  const url = URL.parse(value);
  if (url === null || !protocols.includes(url.protocol)) {
    problem(name, `must be a URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}`);
    return undefined;
  }
  return value;
}

function readPort(value: string | undefined, problem: (field: string, message: string) => void): number {
  if (value === undefined) return DEFAULT_PORT;
  const port = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    problem('PORT', 'must be an integer from 1 to 65535');
    return DEFAULT_PORT;
  }
  return port;
}

function readChoice<CHOICE extends string>({
  name,
  value,
  choices,
  fallback,
  problem,
}: {
  name: string;
  value: string | undefined;
  choices: readonly CHOICE[];
  fallback: CHOICE;
  problem: (field: string, message: string) => void;
}): CHOICE {
  if (value === undefined) return fallback;
  if ((choices as readonly string[]).includes(value)) return value as CHOICE;
  problem(name, `must be one of ${choices.join(', ')}`);
  return fallback;
}

function maskUrlCredentials(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const url = URL.parse(value);
  if (url === null || (url.username === '' && url.password === '')) return value;
  url.username = '[masked]';
  url.password = '';
  return url.toString();
}
