import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { parseConfigFile } from '../../src/config/config-file.js';
import { parseEnvironment } from '../../src/config/environment.js';
import { createBot, type Bot } from '../../src/create-bot.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { watchBots } from '../helpers/bot-activity.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { startFakeSocketMode, type FakeSocketMode } from '../helpers/fake-socket-mode.js';
import { appMentionEnvelope, blockActionsPayload } from '../helpers/signed-request.js';
import { freePort } from './child-bot.js';
import { cardButtons, nextTs, readInvocations, recordingToolsYaml, waitFor } from './harness.js';

const BOT_USER_ID = 'UBOT0001';
const BOT_ID = 'BBOT0001';
const TEAM_ID = 'T0TEAM001';
const CHANNEL = 'C0OPS0001';
const APP_TOKEN = 'xapp-1-A07OPSBOT1-1-fake';
const BOT_TOKEN = 'xoxb-test-token';

interface SocketModeBot {
  bot: Bot;
  slack: FakeSlackApi;
  openai: FakeOpenAI;
  socketMode: FakeSocketMode;
  healthUrl: string;
  invocations(): string[][];
  mention(options: { user: string; text: string; ts: string; eventId?: string }): object;
  replies(threadTs: string): string[];
  /** The barrier before checking that something did not happen (see `BotWatch.settled`). */
  settled(): Promise<void>;
  /** Stops the bot (once; the cleanup calls it too). */
  stop(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  // Bot first: its stop() sets the client's shutting-down flag, so closing the fakes afterwards
  // cannot make the Socket Mode client try to reconnect.
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function startSocketModeBot(): Promise<SocketModeBot> {
  const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, botId: BOT_ID, teamId: TEAM_ID });
  const openai = await startFakeOpenAI();
  const socketMode = await startFakeSocketMode();
  cleanups.push(async () => {
    await socketMode.close();
    await slack.close();
    await openai.close();
  });
  slack.setMethodHandler('apps.connections.open', () => ({ ok: true, url: socketMode.url }));

  const logFile = join(mkdtempSync(join(tmpdir(), 'countersign-socket-')), 'invocations.log');
  const port = await freePort();
  const environment = parseEnvironment(
    {
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_APP_TOKEN: APP_TOKEN,
      SLACK_API_URL: slack.url,
      SLACK_BOT_USER_ID: BOT_USER_ID,
      SLACK_BOT_ID: BOT_ID,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_MODEL: 'gpt-4o-mini',
      OPENAI_API: 'chat',
      PORT: String(port),
      LOG_LEVEL: 'silent',
    },
    { fileExists: () => false },
  );
  expect(environment.slack.socketMode).toBe(true);
  const bot = await createBot({
    environment,
    config: parseConfigFile(recordingToolsYaml(logFile), 'test.yml'),
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    store: createRedisStore({ url: inject('redisUrl'), keyPrefix: `e2e-socket:${randomUUID()}:` }),
  });
  const watch = watchBots();
  watch.add(bot);
  await bot.start();
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= bot.stop());
  cleanups.push(async () => {
    await stop();
    // Bolt's stop() does not wait for the WebSocket close handshake; let it finish before the fake goes.
    await socketMode.disconnected({ timeoutMs: 2_000 }).catch(() => {});
  });
  await socketMode.connected();

  return {
    bot,
    slack,
    openai,
    socketMode,
    healthUrl: `http://127.0.0.1:${port}/healthz`,
    invocations: () => readInvocations(logFile),
    mention: ({ user, text, ts, eventId }) =>
      appMentionEnvelope({
        user,
        text: `<@${BOT_USER_ID}> ${text}`,
        channel: CHANNEL,
        teamId: TEAM_ID,
        botUserId: BOT_USER_ID,
        ts,
        ...(eventId ? { eventId } : {}),
      }),
    replies: (threadTs) =>
      slack
        .messages(CHANNEL, threadTs)
        .filter((message) => message.ts !== threadTs)
        .map((message) => message.text),
    settled: () => watch.settled(),
    stop,
  };
}

const restartCall = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('Socket Mode', () => {
  it('connects with the app token, answers pings, serves /healthz on PORT and closes cleanly on stop', async () => {
    const s = await startSocketModeBot();

    const open = s.slack.callsTo('apps.connections.open');
    expect(open).toHaveLength(1);
    expect(open[0]!.token).toBe(APP_TOKEN);
    expect(s.socketMode.openConnections()).toBe(1);
    expect(await s.socketMode.ping()).toBe(true);

    const health = await fetch(s.healthUrl);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', store: 'redis', redis: 'up' });

    // Stopping the bot closes the socket normally (1000) and does not reconnect.
    await s.stop();
    await s.socketMode.disconnected();
    expect(s.socketMode.clientCloseCodes).toEqual([1000]);
    expect(s.socketMode.connectionsAccepted()).toBe(1);
    expect(s.slack.callsTo('apps.connections.open')).toHaveLength(1);
    expect(s.socketMode.protocolErrors).toEqual([]);
  });

  it('mention → card → Approve click runs the command once and answers in the thread', async () => {
    const s = await startSocketModeBot();
    s.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Restarted **worker** in staging.' });
    const threadTs = nextTs();

    const mention = await s.socketMode.sendEvent(s.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs }));
    expect(mention.acked).toBe(true);

    const card = await waitFor(
      () => s.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0),
      { message: 'the approval card' },
    );
    expect(card.text).toContain('restart_service');
    expect(s.invocations()).toEqual([]);
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve');
    expect(approve).toBeDefined();

    const click = await s.socketMode.sendInteraction(
      blockActionsPayload({ user: 'UBOB', channel: CHANNEL, messageTs: card.ts, threadTs, teamId: TEAM_ID, ...approve! }),
    );
    expect(click.acked).toBe(true);

    await waitFor(() => s.replies(threadTs).some((text) => text.includes('Restarted *worker* in staging.')), { message: 'the answer' });
    expect(s.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const updatedCard = s.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updatedCard.blocks)).toContain('Approved by <@UBOB>');
    expect(cardButtons(updatedCard.blocks)).toEqual([]);

    // Every envelope was acked exactly once, and the Web API calls used the bot token.
    expect(s.socketMode.sent.map((envelope) => envelope.type)).toEqual(['events_api', 'interactive']);
    expect(s.socketMode.acks.map((ack) => ack.envelope_id).sort()).toEqual([mention.envelopeId, click.envelopeId].sort());
    const webApiTokens = new Set(s.slack.calls.filter((call) => call.method !== 'apps.connections.open').map((call) => call.token));
    expect([...webApiTokens]).toEqual([BOT_TOKEN]);
    expect(s.socketMode.protocolErrors).toEqual([]);
  });

  it('answers an event redelivered with retry_attempt 1 once', async () => {
    const s = await startSocketModeBot();
    s.openai.enqueue({ text: 'Only once.' }, { text: 'Second reply should never be requested.' });
    const threadTs = nextTs();
    const envelope = s.mention({ user: 'UALICE', text: 'hello', ts: threadTs, eventId: `Ev-socket-retry-${randomUUID()}` });

    const first = await s.socketMode.sendEvent(envelope);
    const retry = await s.socketMode.sendEvent(envelope, { retryAttempt: 1 });
    expect(first.acked).toBe(true);
    expect(retry.acked).toBe(true);
    expect(s.socketMode.sent.map((sent) => [sent.retry_attempt, sent.retry_reason])).toEqual([
      [0, ''],
      [1, 'timeout'],
    ]);

    await waitFor(() => s.replies(threadTs).includes('Only once.'), { message: 'the answer' });
    await s.settled();
    expect(s.openai.requests).toHaveLength(1);
    expect(s.replies(threadTs)).toEqual(['Only once.']);
  });
});
