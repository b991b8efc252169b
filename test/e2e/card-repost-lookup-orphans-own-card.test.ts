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
 * Review U (c1e7c4a). Replica B posts the card again; Slack APPLIES it (card B1) but the reply is lost
 * (502). Meanwhile replica A posts its own card again (A1, newer than B1) and records it. B's lost-reply
 * lookup takes the NEWEST matching card, A1, for its own; replaceStepCard(old -> A1) now answers true
 * (A1 is on record), so B neither records nor takes back B1: a second card with live buttons is left in
 * the thread for good, never updated when the request is decided (only the card on record is).
 */

const CHANNEL = 'C0OPS';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function barrier() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('two replicas posting the same card again, the loser\'s post applied but its reply lost (review U)', () => {
  it('the loser\'s own applied card is recorded or taken back, not left live beside the one on record', async () => {
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

    const takenBack = new Set<string>();
    const takeBacks = {
      async takeBack({ ts }: { ts: readonly string[] }) {
        for (const each of ts) takenBack.add(each);
      },
    };

    // B's client: its card post is applied by Slack, then (after A has posted and recorded its own) the reply is lost.
    const bPosted = barrier();
    const aDone = barrier();
    let bCard: string | undefined;
    const chatB = Object.create(client.chat) as typeof client.chat;
    chatB.postMessage = (async (args: Parameters<typeof client.chat.postMessage>[0]) => {
      const isCard = JSON.stringify('blocks' in args ? args.blocks : []).includes(step.stepId) && bCard === undefined;
      const answer = await client.chat.postMessage(args);
      if (!isCard) return answer;
      bCard = answer.ts;
      bPosted.open();
      await aDone.opened;
      throw unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('502 Bad Gateway'), status: 502 });
    }) as typeof client.chat.postMessage;
    const clientB = Object.create(client) as WebClient;
    Object.defineProperty(clientB, 'chat', { value: chatB });
    const messengerB = createWebApiMessenger({ client: clientB, logger });

    const replicaA = createCardRefreshes({ store, messenger, takeBacks, logger, pause: async () => {} });
    const replicaB = createCardRefreshes({ store, messenger: messengerB, takeBacks, logger, pause: async () => {} });

    const b = replicaB.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    await bPosted.opened;
    await replicaA.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    const recordedByA = (await store.getStep(step.stepId))!.cardTs!;
    expect(recordedByA).not.toBe(first);
    expect(bCard).toBeDefined();
    expect(recordedByA).not.toBe(bCard);
    aDone.open();
    await b;

    const stored = (await store.getStep(step.stepId))!;
    const bCardStillInThread = slack.messages(CHANNEL, thread.ts!).some((message) => message.ts === bCard);
    expect({
      recorded: stored.cardTs,
      bCardInThread: bCardStillInThread,
      bCardRecordedOrTakenBack: stored.cardTs === bCard || takenBack.has(bCard!),
    }).toEqual({ recorded: recordedByA, bCardInThread: true, bCardRecordedOrTakenBack: true });
  });
});
