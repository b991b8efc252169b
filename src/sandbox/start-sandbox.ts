import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { LanguageModel } from 'ai';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { createRedisAuditLog } from '../store/redis-audit-log.js';
import type { CountersignConfig } from '../config/config-schema.js';
import { loadConfigFile } from '../config/config-file.js';
import { parseEnvironment, type EnvironmentConfig } from '../config/environment.js';
import { createBot, type Bot } from '../create-bot.js';
import { environmentSecrets } from '../config/environment-secrets.js';
import { createLogger } from '../log/create-logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createRedisStore } from '../store/redis-store.js';
import type { StateStore } from '../store/state-store.js';
import { createSlackDelivery } from './emulator/delivery/slack-delivery.js';
import { startSlackEmulator, type SlackEmulator } from './emulator/slack-emulator.js';
import { loadSandboxExampleConfig } from './example/sandbox-example-config.js';
import { sandboxSourcePath } from './package-root.js';
import { SANDBOX_BOT, SANDBOX_CHANNELS, SANDBOX_IDENTITY, SANDBOX_TEAM_ID, SANDBOX_USERGROUPS, SANDBOX_USERS, populateSandboxWorkspace } from './sandbox-workspace.js';
import { sandboxModel } from './sandbox-model.js';
import { pageUrl } from './web/page-url.js';
import { startSandboxServer } from './web/sandbox-server.js';

export interface StartSandboxOptions {
  /** Read for OPENAI_*, REDIS_URL, COUNTERSIGN_CONFIG, PORT, SANDBOX_HOST, SLACK_STREAMING, LOG_LEVEL; default process.env. */
  env?: Record<string, string | undefined>;
  /** Overrides PORT (0: any free port). */
  port?: number;
  /** Overrides the model the environment selects. */
  model?: LanguageModel;
  /** Overrides COUNTERSIGN_CONFIG and the example config. */
  config?: CountersignConfig;
  logger?: Logger;
}

export interface RunningSandbox {
  /** The page, e.g. `http://localhost:3000`. */
  url: string;
  port: number;
  emulator: SlackEmulator;
  bot: Bot;
  logger: Logger;
  /** True when no OPENAI_API_KEY is set and the built-in demo model answers. */
  demoModel: boolean;
  stop(): Promise<void>;
}

/** A secret generated per start: only this process signs requests to its own bot. */
const SIGNING_SECRET_BYTES = 32;
/** Generated per start too: only the bot may call the emulator's Web API. */
const BOT_TOKEN_BYTES = 32;

/**
 * The whole sandbox in one process: the Slack emulator, the real bot (createBot, its Bolt HTTP
 * receiver on a loopback port) talking to it, and the page that lets a person act in the emulated
 * workspace. With the example config and no OPENAI_API_KEY, nothing leaves the machine.
 */
export async function startSandbox(options: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const env = options.env ?? process.env;
  const signingSecret = randomBytes(SIGNING_SECRET_BYTES).toString('hex');
  const botToken = `xoxb-sandbox-${randomBytes(BOT_TOKEN_BYTES).toString('hex')}`;
  const parsed = parseEnvironment(sandboxEnvironment({ env, signingSecret, botToken }));
  const logger = options.logger ?? createLogger({ level: parsed.logLevel, secrets: environmentSecrets(parsed) });
  const publicDirectory = sandboxSourcePath('web', 'public');
  if (!existsSync(publicDirectory)) throw new Error(`the sandbox page is missing from this installation (${publicDirectory}); run countersign from a checkout of its repository`);
  const configPath = env.COUNTERSIGN_CONFIG?.trim();
  const config = options.config ?? (configPath ? await loadConfigFile(configPath) : await loadSandboxExampleConfig());
  const model = sandboxModel({ env, ...(options.model ? { model: options.model } : {}) });

  const emulator = await startSlackEmulator({ identity: SANDBOX_IDENTITY, botToken, profile: { teamName: 'countersign sandbox', teamDomain: 'sandbox', botName: SANDBOX_BOT.name } });
  populateSandboxWorkspace({ emulator });
  const environment: EnvironmentConfig = { ...parsed, slack: { ...parsed.slack, apiUrl: emulator.url } };
  let bot: Bot;
  try {
    bot = await createBot({ environment, config, logger, ...sandboxState({ environment, logger }), ...(model.model ? { model: model.model } : {}) });
  } catch (error) {
    await emulator.close();
    throw error;
  }
  const stopBotAndEmulator = async () => {
    await bot.stop();
    await emulator.close();
  };
  try {
    const { port: botPort } = await bot.start({ port: 0, host: '127.0.0.1' });
    const delivery = createSlackDelivery({ emulator, receiverUrl: `http://127.0.0.1:${botPort}/slack/events`, signingSecret });
    const host = env.SANDBOX_HOST?.trim() || '127.0.0.1';
    const server = await startSandboxServer({
      emulator,
      delivery,
      directory: { users: SANDBOX_USERS, channels: SANDBOX_CHANNELS, usergroups: SANDBOX_USERGROUPS, botName: SANDBOX_BOT.name },
      demoModel: model.demo,
      publicDirectory,
      port: options.port ?? environment.slack.port,
      host,
    });
    const url = pageUrl({ host, port: server.port });
    // Permalinks the bot posts then lead back to the page.
    emulator.state.profile.url = `${url}/`;
    logger.info({ event: 'sandbox-started', url, team: SANDBOX_TEAM_ID, demoModel: model.demo }, `countersign sandbox: ${url}`);
    return {
      url,
      port: server.port,
      emulator,
      bot,
      logger,
      demoModel: model.demo,
      async stop() {
        await server.close();
        await stopBotAndEmulator();
      },
    };
  } catch (error) {
    await stopBotAndEmulator();
    throw error;
  }
}

/**
 * The environment the bot runs with: Slack settings pointing at the emulator, the person's own model,
 * Redis, port and log settings (the config is read apart: COUNTERSIGN_CONFIG, else the example, never
 * a ./countersign.yml meant for Slack). The sandbox's defaults: native streaming (the page shows it)
 * and warnings only in the terminal.
 */
function sandboxEnvironment({ env, signingSecret, botToken }: { env: Record<string, string | undefined>; signingSecret: string; botToken: string }): Record<string, string | undefined> {
  const given = (name: string) => (env[name]?.trim() ? env[name] : undefined);
  return {
    SLACK_BOT_TOKEN: botToken,
    SLACK_SIGNING_SECRET: signingSecret,
    // Replaced by the emulator's address once it listens; parsing first reports bad settings before anything starts.
    SLACK_API_URL: 'http://127.0.0.1/api/',
    SLACK_BOT_USER_ID: SANDBOX_BOT.userId,
    SLACK_BOT_ID: SANDBOX_BOT.botId,
    SLACK_STREAMING: given('SLACK_STREAMING') ?? 'native',
    // The demo model needs no key; parseEnvironment insists on one.
    OPENAI_API_KEY: given('OPENAI_API_KEY') ?? 'not-used-by-the-demo-model',
    OPENAI_BASE_URL: given('OPENAI_BASE_URL'),
    OPENAI_MODEL: given('OPENAI_MODEL'),
    OPENAI_API: given('OPENAI_API'),
    REDIS_URL: given('REDIS_URL'),
    PORT: given('PORT'),
    LOG_LEVEL: given('LOG_LEVEL') ?? 'warn',
  };
}

/** Redis keys of the sandbox: apart from a Slack bot's (`countersign:`) that may share the Redis. */
export const SANDBOX_KEY_PREFIX = 'countersign-sandbox:';

/**
 * Where the sandbox keeps state and audit: in memory, its normal case (so without createBot's
 * warning about it), or in Redis under keys of its own, which `npm run audit` reads with
 * COUNTERSIGN_KEY_PREFIX set to the prefix.
 */
function sandboxState({ environment, logger }: { environment: EnvironmentConfig; logger: Logger }): { store: StateStore; audit: AuditLog } {
  const { redis: target, redisShards } = environment;
  if (target !== undefined) {
    const shards = redisShards === undefined ? {} : { shards: redisShards };
    return { store: createRedisStore({ target, keyPrefix: SANDBOX_KEY_PREFIX, ...shards, auditLogger: logger }), audit: createRedisAuditLog({ target, keyPrefix: SANDBOX_KEY_PREFIX, ...shards, logger }) };
  }
  const audit = createMemoryAuditLog({ logger });
  return { audit, store: createMemoryStore({ audit }) };
}
