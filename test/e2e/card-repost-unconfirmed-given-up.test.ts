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
 * Reviewer: the refresh that carries an unconfirmed re-post inherits the `since` of the refresh that
 * posted it. When that refresh had been failing for most of a day (chat.update 5xx through an outage,
 * then refused for good), the unconfirmed record is given up after a single look made a few seconds
 * later, while the same outage still keeps the thread unreadable: the card Slack did post keeps live
 * buttons, never recorded nor taken back.
 */
const CHANNEL = 'C0OPS';
const DAY_MS = 86_400_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('unconfirmed re-post of a refresh failing for most of a day', () => {
  it('is recorded or taken back once the thread reads again, not given up after one look', async () => {
    const slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM' });
    cleanups.push(() => slack.close());
    const client = new WebClient('xoxb-test', { slackApiUrl: `${slack.url}`, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 }, ...slackTransport({ fetch: globalThis.fetch }) });
    const logger = pino({ level: 'silent' });
    const messenger = createWebApiMessenger({ client, logger });
    const thread = await client.chat.postMessage({ channel: CHANNEL, text: 'restart api' });
    const step = makeStep(['apv-1'], { channel: CHANNEL, threadTs: thread.ts! });
    const store = createMemoryStore();
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 3 * DAY_MS, audit: [], fence: { threadKey: step.threadKey, token } });
    const first = await messenger.postStepCard({ step });
    await store.setStepCard(step.stepId, first);
    slack.failWhen('chat.update', (call) => call.args.ts === first, { error: 'cant_update_message' });
    slack.failWhen('conversations.replies', () => true, { status: 503 });

    const takenBack: string[] = [];
    const takeBacks = { async takeBack({ ts }: { ts: readonly string[] }) { takenBack.push(...ts); } };
    let lost: string | undefined;
    const chat = Object.create(client.chat) as typeof client.chat;
    chat.postMessage = (async (args: Parameters<typeof client.chat.postMessage>[0]) => {
      const isCard = JSON.stringify('blocks' in args ? args.blocks : []).includes(step.stepId);
      if (!isCard || lost !== undefined) return client.chat.postMessage(args);
      lost = (await client.chat.postMessage(args)).ts;
      throw unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('502 Bad Gateway'), status: 502 });
    }) as typeof client.chat.postMessage;
    const lossy = Object.create(client) as WebClient;
    Object.defineProperty(lossy, 'chat', { value: chat });

    let clock = Date.now();
    const refreshes = createCardRefreshes({ store, messenger: createWebApiMessenger({ client: lossy, logger }), takeBacks, logger, now: () => clock, pause: async () => {} });
    // A refresh kept for this card since ~23h59m30s ago (its update failed with 5xx all along), due now.
    await store.scheduleCardRefresh({ stepId: step.stepId, since: clock - DAY_MS + 30_000 }, clock);
    await refreshes.retryDue();
    expect(lost).toMatch(/^\d+\.\d+$/);
    expect(await store.dueCardRefreshes({ now: clock + DAY_MS, limit: 10 })).toHaveLength(1);

    // The sweep's first look, a minute later: the outage still keeps the thread unreadable.
    clock += 60_000;
    await refreshes.retryDue();
    // The thread reads again; sweeps go on.
    slack.failWhen('conversations.replies', undefined);
    for (let i = 0; i < 3; i += 1) {
      clock += 3_600_000;
      await refreshes.retryDue();
    }
    const cardTs = (await store.getStep(step.stepId))?.cardTs;
    expect({ appliedRecordedOrTakenBack: cardTs === lost || takenBack.includes(lost!) }).toEqual({ appliedRecordedOrTakenBack: true });
  });
});
