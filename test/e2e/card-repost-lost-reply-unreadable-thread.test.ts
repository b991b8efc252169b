import { LogLevel, WebClient } from '@slack/web-api';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import { makeStep } from '../../src/approvals/pending-step.test-support.js';
import { slackTransport } from '../../src/slack/create-slack-app.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';
import { unconfirmedWriteError } from '../../src/slack/unrepeated-slack-writes.js';

/**
 * Review: a card posted again (card refresh) that Slack APPLIED but whose reply was lost (502), while the
 * thread cannot be read for the lost-reply lookup (the same outage): postStepCard rethrows, postCardAgain
 * takes it for "not posted", the thread is told the card "above" may be stale, and the refresh is forgotten
 * ('told'). The applied card is neither recorded nor taken back: a second card with live buttons stays in
 * the thread for good, never updated when the request is decided.
 */

const CHANNEL = 'C0OPS';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('card posted again, reply lost, thread unreadable for the lookup', () => {
  it('the applied card is recorded, taken back, or its refresh kept for a later try', async () => {
    const slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM' });
    cleanups.push(() => slack.close());
    const client = new WebClient('xoxb-test', { slackApiUrl: `${slack.url}`, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 }, ...slackTransport({ fetch: globalThis.fetch }) });
    const logger = pino({ level: 'silent' });
    const messenger = createWebApiMessenger({ client, logger });
    const thread = await client.chat.postMessage({ channel: CHANNEL, text: 'restart api' });
    const step = makeStep(['apv-1'], { channel: CHANNEL, threadTs: thread.ts! });
    const store = createMemoryStore();
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
    const first = await messenger.postStepCard({ step });
    await store.setStepCard(step.stepId, first);
    slack.failWhen('chat.update', (call) => call.args.ts === first, { error: 'cant_update_message' });
    // The outage: the thread cannot be read.
    slack.failWhen('conversations.replies', () => true, { status: 503 });

    const takenBack = new Set<string>();
    const takeBacks = {
      async takeBack({ ts }: { ts: readonly string[] }) {
        for (const each of ts) takenBack.add(each);
      },
    };

    // The card's post is applied by Slack, then its reply is lost.
    let applied: string | undefined;
    const chat = Object.create(client.chat) as typeof client.chat;
    chat.postMessage = (async (args: Parameters<typeof client.chat.postMessage>[0]) => {
      const isCard = JSON.stringify('blocks' in args ? args.blocks : []).includes(step.stepId) && applied === undefined;
      const answer = await client.chat.postMessage(args);
      if (!isCard) return answer;
      applied = answer.ts;
      throw unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('502 Bad Gateway'), status: 502 });
    }) as typeof client.chat.postMessage;
    const lossy = Object.create(client) as WebClient;
    Object.defineProperty(lossy, 'chat', { value: chat });

    const refreshes = createCardRefreshes({ store, messenger: createWebApiMessenger({ client: lossy, logger }), takeBacks, logger, pause: async () => {} });
    await refreshes.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });

    expect(applied).toBeDefined();
    const stored = (await store.getStep(step.stepId))!;
    const stillKept = (await store.dueCardRefreshes({ now: Date.now() + 86_400_000, limit: 10 })).length > 0;
    const appliedInThread = slack.messages(CHANNEL, thread.ts!).some((message) => message.ts === applied);
    expect({
      appliedInThread,
      appliedCardRecordedOrTakenBackOrRefreshKept: stored.cardTs === applied || takenBack.has(applied!) || stillKept,
    }).toEqual({ appliedInThread: true, appliedCardRecordedOrTakenBackOrRefreshKept: true });
  });
});
