import { LogLevel, WebClient } from '@slack/web-api';
import { type Logger, pino } from 'pino';
import { makeStep } from '../../src/approvals/pending-step.test-support.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { slackTransport } from '../../src/slack/create-slack-app.js';
import { unconfirmedWriteError } from '../../src/slack/unrepeated-slack-writes.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import { type FakeSlackApi, startFakeSlackApi } from './fake-slack-api.js';

export const CARD_REPOST_CHANNEL = 'C0OPS';

export interface CardRepostScene {
  slack: FakeSlackApi;
  /** A client straight to the fake Slack (no retries: a failure the test stages is met once). */
  client: WebClient;
  /** A client like `client` to another address (an edge in front of the fake Slack). */
  clientTo(url: string): WebClient;
  logger: Logger;
  /** The messenger over `client`, which posted the first card. */
  messenger: ThreadMessenger;
  threadTs: string;
  step: PendingStep;
  store: StateStore;
  /** The ts of the step's first card, on record. */
  firstCardTs: string;
}

/**
 * What every card re-post test starts from: a thread in a fake Slack with a pending step whose first card is
 * posted and on record in a memory store, and Slack refusing for good to update that card, so a card refresh
 * posts the card again. `threadUnreadable` adds the outage a lost-reply lookup meets: conversations.replies
 * answers 503 until the test lifts it.
 */
export async function startCardRepostScene(options: {
  cleanups: Array<() => Promise<void>>;
  threadUnreadable?: boolean;
  stepTtlMs?: number;
}): Promise<CardRepostScene> {
  const { cleanups, threadUnreadable = false, stepTtlMs = 3_600_000 } = options;
  const slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM' });
  cleanups.push(() => slack.close());
  const clientTo = (url: string) => new WebClient('xoxb-test', { slackApiUrl: url, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 }, ...slackTransport({ fetch: globalThis.fetch }) });
  const client = clientTo(`${slack.url}`);
  const logger = pino({ level: 'silent' });
  const messenger = createWebApiMessenger({ client, logger });
  const thread = await client.chat.postMessage({ channel: CARD_REPOST_CHANNEL, text: 'restart api' });
  const threadTs = thread.ts!;
  const step = makeStep(['apv-1'], { channel: CARD_REPOST_CHANNEL, threadTs });
  const store = createMemoryStore();
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: stepTtlMs, audit: [], fence: { threadKey: step.threadKey, token } });
  const firstCardTs = await messenger.postStepCard({ step });
  await store.setStepCard(step.stepId, firstCardTs);
  slack.failWhen('chat.update', (call) => call.args.ts === firstCardTs, { error: 'cant_update_message' });
  if (threadUnreadable) slack.failWhen('conversations.replies', () => true, { status: 503 });
  return { slack, client, clientTo, logger, messenger, threadTs, step, store, firstCardTs };
}

/** Take-backs that only note the ts they were asked to take back, in order. */
export function recordedTakeBacks(): { takeBacks: { takeBack(options: { ts: readonly string[] }): Promise<void> }; takenBack: string[] } {
  const takenBack: string[] = [];
  return {
    takenBack,
    takeBacks: {
      async takeBack({ ts }) {
        takenBack.push(...ts);
      },
    },
  };
}

/**
 * A client whose FIRST post of the step's card loses its reply (a 502): Slack applies the post or not
 * (`applied`), and the post throws as an unconfirmed write either way. `lost()` is the applied card's ts,
 * 'not-applied', or undefined before the post. `beforeReplyLost` holds the lost reply back while the test
 * stages a race.
 */
export function clientLosingCardReply(options: { client: WebClient; stepId: string; applied: boolean; beforeReplyLost?: () => Promise<void> }): {
  client: WebClient;
  lost: () => string | undefined;
} {
  const { client, stepId, applied, beforeReplyLost } = options;
  let lost: string | undefined;
  const chat = Object.create(client.chat) as typeof client.chat;
  chat.postMessage = (async (args: Parameters<typeof client.chat.postMessage>[0]) => {
    const isCard = JSON.stringify('blocks' in args ? args.blocks : []).includes(stepId);
    if (!isCard || lost !== undefined) return client.chat.postMessage(args);
    lost = applied ? (await client.chat.postMessage(args)).ts : 'not-applied';
    await beforeReplyLost?.();
    throw unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('502 Bad Gateway'), status: 502 });
  }) as typeof client.chat.postMessage;
  const lossy = Object.create(client) as WebClient;
  Object.defineProperty(lossy, 'chat', { value: chat });
  return { client: lossy, lost: () => lost };
}

/** A client whose FIRST ":warning:" notice post Slack applies but whose reply is lost (a 502). */
export function clientLosingNoticeReply(client: WebClient): WebClient {
  let lost = false;
  const chat = Object.create(client.chat) as typeof client.chat;
  chat.postMessage = (async (args: Parameters<typeof client.chat.postMessage>[0]) => {
    const isNotice = String((args as { text?: string }).text ?? '').startsWith(':warning:');
    if (!isNotice || lost) return client.chat.postMessage(args);
    lost = true;
    await client.chat.postMessage(args);
    throw unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('502 Bad Gateway'), status: 502 });
  }) as typeof client.chat.postMessage;
  const lossy = Object.create(client) as WebClient;
  Object.defineProperty(lossy, 'chat', { value: chat });
  return lossy;
}
