import { pino } from 'pino';
import { expect, it } from 'vitest';
import { SlackCallError } from '../errors/countersign-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createCardRefreshes, keepCardToRedraw } from './card-refreshes.js';
import { approve, openStep } from './card-refreshes.test-support.js';
import { makeStep } from './pending-step.test-support.js';

const logger = pino({ level: 'silent' });

/**
 * d0b8b58 / 1b81776 made the "posted again just above" notice told once when its post's reply was
 * lost (a 502 after Slack posted it): the owed notice looks for its own text below the card first
 * (`unlessPostedAfter`). The other notice a card refresh tells, "Slack would not update the approval
 * card above, so it may show an earlier state" (a decided request's card Slack refuses, or a card that
 * could not be posted again), has no such look: a try that follows a lost reply tells the thread again,
 * and again on every try until one's reply arrives.
 */
it('the "may show an earlier state" notice whose reply was lost is told once', async () => {
  let clock = 1_000_000;
  const now = () => clock;
  const store = createMemoryStore({ now });
  const step = makeStep(['apv-1']);
  await openStep(store, step, 7 * 24 * 3_600_000);
  await store.setStepCard(step.stepId, '1000.000100');
  // Bob's approval decided the request; Slack refuses to update its card for good.
  await approve(store, step.stepId);
  expect((await store.getStep(step.stepId))?.phase).not.toBe('pending');

  // The thread as Slack has it: each notice with its ts.
  const thread: Array<{ ts: string; text: string }> = [];
  let lostReplies = 1;
  const messenger = {
    async updateStepCard() {
      throw new SlackCallError({ method: 'chat.update', cause: new Error('An API error occurred: cant_update_message'), tryLater: false });
    },
    async updateStepCopy() {},
    async postStepCard() {
      throw new Error('a decided request is not posted again');
    },
    async findPostedCard() {
      return undefined;
    },
    async permalinkOf() {
      return undefined;
    },
    async postNotice({ text, unlessPostedAfter }: { text: string; unlessPostedAfter?: string }) {
      if (unlessPostedAfter !== undefined && thread.some((message) => message.text === text && Number(message.ts) > Number(unlessPostedAfter))) return;
      // Slack posts it...
      thread.push({ ts: `${2000 + thread.length}.000100`, text });
      // ...but its reply is lost (a 502).
      if (lostReplies > 0) {
        lostReplies -= 1;
        throw Object.assign(new Error('An HTTP protocol error occurred: statusCode = 502'), { code: 'slack_webapi_http_error', statusCode: 502 });
      }
    },
  };
  const refreshes = createCardRefreshes({ store, messenger, takeBacks: { takeBack: async () => {} }, logger, now, pause: async (ms) => void (clock += ms) });

  // As the decision's publish (or the expiry) leaves it: kept for the sweep.
  await keepCardToRedraw({ store, stepId: step.stepId, logger, at: clock });
  for (let sweep = 0; sweep < 4 && (await store.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 10 })).length > 0; sweep += 1) {
    await refreshes.retryDue();
    clock += 60 * 60_000;
  }
  expect(await store.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 10 })).toEqual([]);
  // Told once: the thread shows one notice, not one per try.
  expect(thread.map((message) => message.text)).toHaveLength(1);
});
