import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SlackCallError } from '../errors/countersign-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createCardRefreshes } from './card-refreshes.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

const APPROVALS = 'C0APPROVALS';

/**
 * A card recorded without its link (Slack would not give it when it was posted) still has copies
 * that link back to it. Posted again, the new card asked for its link only when the one it
 * replaced had one, so the copies went without a link for good; now it asks whenever the step
 * has copies (or its routing asks for some), as the first post and a found first card do.
 */
describe('a card posted again for a step with copies and no link on record', () => {
  it('is recorded with its link', async () => {
    let clock = 1_000_000;
    const now = () => clock;
    const store = createMemoryStore({ now });
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: true, channels: [APPROVALS], dmApprovers: false } }) }]);
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60 * 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
    // Recorded without its link: permalinkOf failed when the card was posted.
    await store.setStepCard(step.stepId, 'card-1');
    await store.recordCardCopy(step.stepId, { kind: 'channel', channel: APPROVALS, ts: 'copy-1' });

    const linksAsked: string[] = [];
    const messenger = {
      async updateStepCard({ step: drawn }: { step: { cardTs: string } }) {
        if (drawn.cardTs === 'card-1') throw new SlackCallError({ method: 'chat.update', cause: new Error('An API error occurred: invalid_blocks'), tryLater: false });
      },
      async updateStepCopy() {},
      async postStepCard() {
        return 'card-2';
      },
      async findPostedCard() {
        return undefined;
      },
      async permalinkOf({ ts }: { ts: string }) {
        linksAsked.push(ts);
        return `https://slack.example/${ts}`;
      },
      async postNotice() {},
    };
    const refreshes = createCardRefreshes({ store, messenger, takeBacks: { takeBack: async () => {} }, logger: pino({ level: 'silent' }), now, pause: async (ms) => void (clock += ms) });

    await refreshes.redraw({ stepId: step.stepId, error: new Error('chat.update failed') });

    const stored = await store.getStep(step.stepId);
    expect({ cardTs: stored?.cardTs, cardLink: stored?.cardLink, linksAsked }).toEqual({ cardTs: 'card-2', cardLink: 'https://slack.example/card-2', linksAsked: ['card-2'] });
  });
});
