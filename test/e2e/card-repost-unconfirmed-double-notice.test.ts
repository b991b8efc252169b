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
 * Reviewer copy of card-repost-unconfirmed-settled.test.ts's harness, with a second sweeping replica.
 * A card posted again whose reply was lost while the thread could not be read (the reviewer's
 * card-repost-lost-reply-unreadable-thread.test.ts) is kept for a later look, by its post's mark: no
 * other card is posted while the thread stays unreadable; once it reads, the card Slack posted is
 * recorded as the step's, or taken back if another card was recorded meanwhile, and a post Slack did
 * not apply is made again.
 */

const CHANNEL = 'C0OPS';
const DAY_MS = 86_400_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp({ applied }: { applied: boolean }) {
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
  slack.failWhen('conversations.replies', () => true, { status: 503 });

  const takenBack: string[] = [];
  const takeBacks = {
    async takeBack({ ts }: { ts: readonly string[] }) {
      takenBack.push(...ts);
    },
  };
  // The first card posted again loses its reply: applied by Slack, or not.
  let lost: string | 'not-applied' | undefined;
  const chat = Object.create(client.chat) as typeof client.chat;
  chat.postMessage = (async (args: Parameters<typeof client.chat.postMessage>[0]) => {
    const isCard = JSON.stringify('blocks' in args ? args.blocks : []).includes(step.stepId);
    if (!isCard || lost !== undefined) return client.chat.postMessage(args);
    lost = applied ? (await client.chat.postMessage(args)).ts : 'not-applied';
    throw unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('502 Bad Gateway'), status: 502 });
  }) as typeof client.chat.postMessage;
  const lossy = Object.create(client) as WebClient;
  Object.defineProperty(lossy, 'chat', { value: chat });

  let clock = Date.now();
  const refreshes = createCardRefreshes({ store, messenger: createWebApiMessenger({ client: lossy, logger }), takeBacks, logger, now: () => clock, pause: async () => {} });
  const cardsPosted = () => slack.callsTo('chat.postMessage').filter((call) => JSON.stringify(call.args.blocks ?? []).includes(step.stepId)).length;
  const notices = () => slack.messages(CHANNEL, thread.ts!).filter((message) => message.text.startsWith(':warning:')).map((message) => message.text);
  const makeRefreshes = (find?: (original: () => Promise<string | undefined>) => Promise<string | undefined>) => {
    const base = createWebApiMessenger({ client: lossy, logger });
    const messenger = find === undefined ? base : { ...base, findPostedCard: (o: Parameters<typeof base.findPostedCard>[0]) => find(() => base.findPostedCard(o)) };
    return createCardRefreshes({ store, messenger, takeBacks, logger, now: () => clock, pause: async () => {} });
  };
  return {
    makeRefreshes,
    advance: (ms: number) => { clock += ms; },
    slack,
    store,
    step,
    first,
    refreshes,
    takenBack,
    lost: () => lost,
    cardsPosted,
    notices,
    /** A sweep a while later (the kept pauses double: an hour is past any of them). */
    sweepLater: async (ms = 3_600_000) => {
      clock += ms;
      await refreshes.retryDue();
    },
    kept: async () => store.dueCardRefreshes({ now: clock + DAY_MS, limit: 10 }),
  };
}


describe('two replicas settle the same unconfirmed re-post', () => {
  it('tells the thread once that the card was posted again, when a slow look outlasts its claim', async () => {
    const t = await setUp({ applied: true });
    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    const applied = t.lost();
    expect(applied).toMatch(/^\d+\.\d+$/);
    t.slack.failWhen('conversations.replies', undefined);

    // Replica 1's look at the thread is slow (a 429 waited out by its own call): its claim lapses meanwhile.
    let entered!: () => void;
    const inLook = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const replica1 = t.makeRefreshes(async (original) => {
      const found = await original();
      entered();
      await released;
      return found;
    });
    const replica2 = t.makeRefreshes();

    t.advance(60_000);
    const sweep1 = replica1.retryDue();
    await inLook;
    // Past replica 1's claim (as long as the work has failed: ~60 s here): replica 2's sweep claims the same record and settles it.
    t.advance(90_000);
    await replica2.retryDue();
    expect((await t.store.getStep(t.step.stepId))?.cardTs).toBe(applied);
    release();
    await sweep1;

    expect({ cardTs: (await t.store.getStep(t.step.stepId))?.cardTs, notices: t.notices() }).toEqual({
      cardTs: applied,
      notices: [expect.stringContaining('so it is posted again just above')],
    });
  });
});
