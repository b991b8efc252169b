import { LogLevel, WebClient } from '@slack/web-api';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import { makeStep } from '../../src/approvals/pending-step.test-support.js';
import { slackTransport } from '../../src/slack/create-slack-app.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';

/**
 * Review S. Two replicas post the same card again (each had an update of the step's card refused for
 * good; or two sweeps that both "claimed" the refresh). Replica A posts card X and records it. Replica B,
 * which read the step before A's record, posts too; its post meets a 502 and is not applied, so
 * postStepCard looks for it among the thread's cards newer than the old one with the same text and step
 * id, and finds A's card X. B's replaceStepCard(old → X) then fails (X is on record already), and
 * postCardAgain takes back X: the card ON RECORD for the still-pending step, the only one with live
 * buttons, is deleted, and its refresh is forgotten: nobody posts another.
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

describe('two replicas posting the same card again (review S)', () => {
  it('the loser, whose post lost its reply, does not take back the card the winner recorded', async () => {
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

    // Slack will not update the first card any more.
    slack.failWhen('chat.update', (call) => call.args.ts === first, { error: 'cant_update_message' });
    const takenBack = new Set<string>();
    const takeBacks = {
      async takeBack({ ts }: { ts: readonly string[] }) {
        for (const each of ts) takenBack.add(each);
      },
    };

    // Replica B has read the step (card = first) and is about to update it when replica A's redraw runs.
    const bRead = barrier();
    const aDone = barrier();
    const messengerB = {
      ...messenger,
      async updateStepCard(options: { step: PendingStep & { cardTs: string } }) {
        bRead.open();
        await aDone.opened;
        // A's card is on record now; B's post (after this refused update) meets a 502 and is not applied.
        slack.failNext('chat.postMessage', { status: 502 });
        return messenger.updateStepCard(options);
      },
    };
    const replicaA = createCardRefreshes({ store, messenger, takeBacks, logger, pause: async () => {} });
    const replicaB = createCardRefreshes({ store, messenger: messengerB, takeBacks, logger, pause: async () => {} });

    const b = replicaB.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    await bRead.opened;
    await replicaA.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });
    const recordedByA = (await store.getStep(step.stepId))!.cardTs!;
    expect(recordedByA).not.toBe(first);
    aDone.open();
    await b;

    const stored = (await store.getStep(step.stepId))!;
    expect(stored.phase).toBe('pending');
    const kept = await store.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 10 });
    // The pending step's card on record must not have been taken back (or something must still redraw it).
    expect({ recorded: stored.cardTs, recordedCardTakenBack: takenBack.has(stored.cardTs!), refreshesKept: kept.length }).toEqual({
      recorded: recordedByA,
      recordedCardTakenBack: false,
      refreshesKept: 0,
    });
  });
});
