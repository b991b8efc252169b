import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, inject } from 'vitest';
import { pino } from 'pino';
import type { TracerProvider } from '@opentelemetry/api';
import { parseConfigFile } from '../../src/config/config-file.js';
import { parseEnvironment, type EnvironmentConfig } from '../../src/config/environment.js';
import { createBot, type Bot, type CreateBotOptions } from '../../src/create-bot.js';
import type { StoredAuditEvent } from '../../src/audit/audit-event.js';
import type { RedisTarget } from '../../src/config/redis-target.js';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { watchBots, type BotWatch, type SettleOptions } from '../helpers/bot-activity.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import {
  appMentionEnvelope,
  blockActionsPayload,
  messageEnvelope,
  postSlackEvent,
  postSlackInteraction,
  slackSignature,
  viewSubmissionPayload,
} from '../helpers/signed-request.js';

export const SIGNING_SECRET = 'test-signing-secret';
export const BOT_USER_ID = 'UBOT0001';
export const TEAM_ID = 'T0TEAM001';
export const CHANNEL = 'C0OPS0001';

const RECORDER = join(import.meta.dirname, '../fixtures/record-invocation.mjs');

/** A config with one read-only and one approval-gated command tool that record their invocations. */
export function recordingToolsYaml(logFile: string): string {
  const argv = (...rest: string[]) => JSON.stringify([process.execPath, RECORDER, logFile, ...rest]);
  return `
instructions: You are a test ops bot.
tools:
  - name: get_pods
    description: List pods in a namespace
    command: ${argv('get', 'pods', '-n', '{namespace}')}
    parameters:
      namespace: { type: string, enum: [staging, prod] }
    approval: never
  - name: restart_service
    description: Restart a deployment
    command: ${argv('rollout', 'restart', 'deployment/{service}', '-n', '{namespace}')}
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      namespace: { type: string, enum: [staging, prod] }
    approval: always
`;
}

/** What the recording tools of `recordingToolsYaml` were run with, one argv per run, oldest first. */
export function readInvocations(logFile: string): string[][] {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as string[]);
}

const WARNINGS_KEPT = 50;
/** What the harness's environment says METRICS_PORT is; the listener itself takes a free port. */
export const HARNESS_METRICS_PORT = '9464';

export interface Harness {
  bot: Bot;
  eventsUrl: string;
  baseUrl: string;
  /** `GET /metrics`: on the bot's METRICS_PORT listener (a free port of its own), or on its Slack port when the test's METRICS_PORT says so. */
  metricsUrl: string;
  slack: FakeSlackApi;
  openai: FakeOpenAI;
  keyPrefix: string;
  logFile: string;
  /** Every argv the recording tools were run with, in order. */
  invocations(): string[][];
  /** The bot's last warnings and errors (JSON lines; with TEST_LOG_LEVEL set they go to stdout instead), for failure messages. */
  warnings(): string[];
  mention(options: { user: string; text: string; ts?: string; threadTs?: string; eventId?: string }): Promise<Response>;
  threadMessage(options: { user: string; text: string; threadTs: string; ts?: string }): Promise<Response>;
  click(options: { user: string; cardTs: string; threadTs: string; actionId: string; value: string }): Promise<Response>;
  /** `/countersign <text>` typed by `user` in the test channel. */
  slashCommand(options: { user: string; text: string; channel?: string }): Promise<Response>;
  /** Submits a modal the bot opened; the response body is Bolt's ack (e.g. `response_action: errors`). */
  submitView(options: { user: string; view: { callback_id: string; private_metadata: string }; values: Record<string, Record<string, unknown>> }): Promise<Response>;
  /** What the audit trail (the Redis stream `npm run audit` reads) holds for this harness. */
  auditEvents(): Promise<StoredAuditEvent[]>;
  /**
   * Resolves once this bot and its replicas have nothing left to do: every Slack request handled,
   * no thread drain running, nothing queued or in flight in Redis. The barrier before checking
   * that something did not happen (see `BotWatch.settled`).
   */
  settled(options?: SettleOptions): Promise<void>;
  /** Starts another bot process (same Redis keys, same fakes): a replica, or the bot after a restart. */
  startReplica(): Promise<Harness>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  api?: 'chat' | 'responses';
  /** A dedicated Redis (for tests that stop it); defaults to the suite's shared one. */
  redisUrl?: string;
  /** Appended to the default tools config (e.g. a `policy:` section). */
  extraYaml?: string;
  now?: () => number;
  sweepIntervalMs?: number;
  modelTimeoutMs?: number;
  /** How long a turn runs before its status line shows; default 250 ms. */
  statusDelayMs?: number;
  /** How long a click or a reply waits for an unavailable store (default `CLICK_STORE_WAIT_MS`). */
  storeWaitMs?: number;
  /** How long a posted card's ts waits for an unavailable store (default 10 s). */
  cardRecordWaitMs?: number;
  /** When kept take-backs and card redraws are tried again (default `KEPT_RETRIES`). */
  keptRetries?: CreateBotOptions['keptRetries'];
  /** Wraps the bot's (real Redis) store, e.g. to hold one of its writes at a chosen moment. */
  wrapStore?: (store: StateStore) => StateStore;
  /** More environment variables for the bot (e.g. `SLACK_STREAMING`). */
  environment?: Record<string, string>;
  /** Changes the parsed environment, as a `createBot` caller who builds it by hand may: no variable check applies. */
  editEnvironment?: (environment: EnvironmentConfig) => EnvironmentConfig;
  tools?: ToolDefinition[];
  configYaml?: string;
  onApprovalRequest?: CreateBotOptions['onApprovalRequest'];
  scheduleClock?: CreateBotOptions['scheduleClock'];
  /** Where the bot's spans go (e.g. an in-memory exporter's provider). */
  tracerProvider?: TracerProvider;
  /** How the bot's Slack client retries (default the production `SLACK_RETRY_CONFIG`). */
  slackRetryConfig?: CreateBotOptions['slackRetryConfig'];
  shared?: { slack: FakeSlackApi; openai: FakeOpenAI; keyPrefix: string; logFile: string; watch: BotWatch };
}

/**
 * The clock Redis judges deadlines by for the bots on a key prefix (`serverClock`, in place of its
 * `TIME`): the first bot's fake clock, when it runs on one. Every replica on those keys is judged by
 * it, as by the one Redis they share, whatever its own clock says.
 */
const redisClocks = new Map<string, () => number>();

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const slack = options.shared?.slack ?? (await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID }));
  const openai = options.shared?.openai ?? (await startFakeOpenAI());
  const keyPrefix = options.shared?.keyPrefix ?? `e2e:${randomUUID()}:`;
  const logFile = options.shared?.logFile ?? join(mkdtempSync(join(tmpdir(), 'countersign-')), 'invocations.log');
  const watch = options.shared?.watch ?? watchBots();
  const parsed = parseEnvironment({
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.url,
    SLACK_BOT_USER_ID: BOT_USER_ID,
    SLACK_BOT_ID: 'BBOT0001',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_MODEL: 'gpt-4o-mini',
    OPENAI_API: options.api ?? 'chat',
    REDIS_URL: options.redisUrl ?? inject('redisUrl'),
    LOG_LEVEL: 'silent',
    // Any port but PORT's: start() below puts the metrics listener on a free one.
    METRICS_PORT: HARNESS_METRICS_PORT,
    ...options.environment,
  });
  const environment = options.editEnvironment ? options.editEnvironment(parsed) : parsed;
  // Any REDIS_URL form (one server, redis+cluster://, redis+sentinel://), as the bot reads it.
  const redisTarget = environment.redis as RedisTarget;
  if (options.shared === undefined && options.now) redisClocks.set(keyPrefix, options.now);
  const serverClock = redisClocks.get(keyPrefix);
  const config = parseConfigFile(options.configYaml ?? `${recordingToolsYaml(logFile)}\n${options.extraYaml ?? ''}`, 'test.yml');
  // A schedule on the real clock fires whenever the wall clock reaches its cron, in the middle of
  // whatever test runs then: its turn takes the fake model's next scripted reply from the turn under
  // test (a resumed turn got another turn's tool call instead of its answer, once in 16 suite runs).
  if (config.schedules.length > 0 && options.scheduleClock === undefined) {
    throw new Error('a config with schedules needs a scheduleClock (createManualScheduleClock): on the real clock a firing can come mid-test');
  }
  // Kept, not printed: a flaky test can say what the bot saw (the last WARNINGS_KEPT lines).
  const warnings: string[] = [];
  const logger = process.env.TEST_LOG_LEVEL
    ? pino({ level: process.env.TEST_LOG_LEVEL })
    : pino(
        { level: 'warn' },
        {
          write(line: string) {
            warnings.push(line);
            if (warnings.length > WARNINGS_KEPT) warnings.shift();
          },
        },
      );
  const bot = await createBot({
    environment,
    config,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.onApprovalRequest ? { onApprovalRequest: options.onApprovalRequest } : {}),
    ...(options.scheduleClock ? { scheduleClock: options.scheduleClock } : {}),
    ...(options.tracerProvider ? { tracerProvider: options.tracerProvider } : {}),
    ...(options.slackRetryConfig ? { slackRetryConfig: options.slackRetryConfig } : {}),
    logger,
    ...(options.now ? { now: options.now } : {}),
    ...(options.sweepIntervalMs ? { sweepIntervalMs: options.sweepIntervalMs } : {}),
    ...(options.modelTimeoutMs ? { modelTimeoutMs: options.modelTimeoutMs } : {}),
    ...(options.statusDelayMs === undefined ? {} : { statusDelayMs: options.statusDelayMs }),
    ...(options.keptRetries ? { keptRetries: options.keptRetries } : {}),
    ...(options.cardRecordWaitMs === undefined ? {} : { cardRecordWaitMs: options.cardRecordWaitMs }),
    ...(options.storeWaitMs === undefined ? {} : { storeWaitMs: options.storeWaitMs }),
    store: (options.wrapStore ?? ((store: StateStore) => store))(createRedisStore({ target: redisTarget, keyPrefix, ...(serverClock ? { serverClock } : {}) })),
    audit: createRedisAuditLog({ target: redisTarget, keyPrefix, logger: pino({ level: 'silent' }) }),
  });
  watch.add(bot);
  const { port, metricsPort } = await bot.start({ port: 0, host: '127.0.0.1', metricsPort: 0, metricsHost: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${port}`;
  const metricsUrl = `${metricsPort === undefined ? baseUrl : `http://127.0.0.1:${metricsPort}`}/metrics`;
  const eventsUrl = `${baseUrl}/slack/events`;
  const shared = { slack, openai, keyPrefix, logFile, watch };
  const ownsFakes = options.shared === undefined;

  return {
    bot,
    eventsUrl,
    baseUrl,
    metricsUrl,
    slack,
    openai,
    keyPrefix,
    logFile,
    invocations: () => readInvocations(logFile),
    warnings: () => [...warnings],
    mention: ({ user, text, ts, threadTs, eventId }) =>
      postSlackEvent({
        url: eventsUrl,
        signingSecret: SIGNING_SECRET,
        envelope: appMentionEnvelope({
          user,
          text: `<@${BOT_USER_ID}> ${text}`,
          channel: CHANNEL,
          teamId: TEAM_ID,
          botUserId: BOT_USER_ID,
          ...(ts ? { ts } : {}),
          ...(threadTs ? { threadTs } : {}),
          ...(eventId ? { eventId } : {}),
        }),
      }),
    threadMessage: ({ user, text, threadTs, ts }) =>
      postSlackEvent({
        url: eventsUrl,
        signingSecret: SIGNING_SECRET,
        envelope: messageEnvelope({ user, text, channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID, ...(ts ? { ts } : {}) }),
      }),
    click: ({ user, cardTs, threadTs, actionId, value }) =>
      postSlackInteraction({
        url: eventsUrl,
        signingSecret: SIGNING_SECRET,
        payload: blockActionsPayload({ user, channel: CHANNEL, messageTs: cardTs, threadTs, actionId, value, teamId: TEAM_ID }),
      }),
    slashCommand: ({ user, text, channel = CHANNEL }) => {
      const body = new URLSearchParams({
        token: 'legacy',
        team_id: TEAM_ID,
        team_domain: 'fake',
        channel_id: channel,
        channel_name: 'ops',
        user_id: user,
        user_name: user.toLowerCase(),
        command: '/countersign',
        text,
        api_app_id: 'A0COUNTERSIGN',
        response_url: `${slack.url}response-url`,
        trigger_id: `${Date.now()}.trigger`,
      }).toString();
      const timestamp = Math.floor(Date.now() / 1000);
      return fetch(eventsUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': slackSignature({ signingSecret: SIGNING_SECRET, timestamp, body }),
        },
        body,
      });
    },
    submitView: ({ user, view, values }) =>
      postSlackInteraction({
        url: eventsUrl,
        signingSecret: SIGNING_SECRET,
        payload: viewSubmissionPayload({ user, callbackId: view.callback_id, privateMetadata: view.private_metadata, values, teamId: TEAM_ID }),
      }),
    async auditEvents() {
      const reader = createRedisAuditLog({ target: redisTarget, keyPrefix, logger: pino({ level: 'silent' }) });
      try {
        return await reader.read({ sinceMs: 0 });
      } finally {
        await reader.close();
      }
    },
    settled: (settleOptions) => watch.settled(settleOptions),
    startReplica: () => startHarness({ ...options, shared }),
    async stop() {
      await bot.stop();
      if (ownsFakes) {
        await slack.close();
        await openai.close();
      }
    },
  };
}

/** The Approve/Deny button values on a posted card, in call order. */
export function cardButtons(blocks: any[] | undefined): Array<{ actionId: string; value: string }> {
  return (blocks ?? [])
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements)
    .filter((element: any) => element.type === 'button')
    .map((element: any) => ({ actionId: element.action_id as string, value: element.value as string }));
}

/**
 * Polls until `probe` gives a value. The default ceiling is generous: on a busy 2-core machine (a second
 * suite beside this one) a turn through the fake servers can take seconds; a passing test never waits it out.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 15_000, message = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let tsCounter = 0;
/** Unique message timestamps shaped like Slack's (each test file has its own fakes and Redis keys). */
export function nextTs(): string {
  tsCounter += 1;
  return `${1_800_000_000 + tsCounter}.${String(tsCounter).padStart(6, '0')}`;
}

/** Starts harnesses for a test file and stops them after each test. */
export function useHarnesses(): (options?: HarnessOptions) => Promise<Harness> {
  const running: Harness[] = [];
  afterEach(async () => {
    while (running.length > 0) await running.pop()?.stop();
  });
  return async (options) => {
    const started = await startHarness(options);
    running.push(started);
    return started;
  };
}

/** Messages the bot posted in a thread (everything but the parent). */
export function threadReplies(h: Harness, threadTs: string, channel = CHANNEL) {
  return h.slack.messages(channel, threadTs).filter((message) => message.ts !== threadTs);
}
