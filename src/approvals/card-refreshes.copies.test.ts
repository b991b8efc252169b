import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createCardRefreshes, keepCardToRedraw } from './card-refreshes.js';
import type { PendingStep } from './pending-step.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { withMissingCopies } from './post-card-copies.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';

/**
 * A decision whose outcome was not known posts no copies itself (a recorded edit does): an edit that
 * landed under a rule routed to #approvals only, drawn again by the sweep once Redis answers (its own
 * tries over, or its process gone), would leave that rule's approvers never shown the request.
 */
describe('a card drawn again by the sweep', () => {
  it('posts first the copies its routing asks for and lacks, once, and the card shows them', async () => {
    const store = createMemoryStore();
    // As the edit left it: routed to #approvals only, with no copy there.
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: false, channels: [APPROVALS], dmApprovers: false } }) }]);
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60 * 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await store.setStepCard(step.stepId, 'card-1');

    const events: string[] = [];
    const messenger = {
      async updateStepCard({ step: drawn }: { step: PendingStep }) {
        events.push(`card with ${(drawn.copies ?? []).map((copy) => copy.channel).join(',') || 'no copies'}`);
      },
      async updateStepCopy() {},
      async postStepCopy({ target }: { target: CardCopyTarget }) {
        const channel = target.kind === 'channel' ? target.channel : `D-${target.userId}`;
        events.push(`copy in ${channel}`);
        return { kind: target.kind, channel, ts: `copy-${events.length}` };
      },
    } as unknown as ThreadMessenger;
    const takeBacks = { takeBack: async () => {} };
    const refreshes = createCardRefreshes({
      store,
      messenger,
      takeBacks,
      logger,
      copies: (shown) => withMissingCopies({ store, messenger, takeBacks, logger, step: shown, failure: 'could not post copies' }),
    });

    await keepCardToRedraw({ store, stepId: step.stepId, logger, at: Date.now() });
    await refreshes.retryDue();
    expect(events).toEqual(['copy in C0APPROVALS', `card with ${APPROVALS}`]);
    expect((await store.getStep(step.stepId))?.copies?.map((copy) => copy.channel)).toEqual([APPROVALS]);

    // Another redraw of the same step posts no second copy.
    await keepCardToRedraw({ store, stepId: step.stepId, logger, at: Date.now() });
    await refreshes.retryDue();
    expect(events).toEqual(['copy in C0APPROVALS', `card with ${APPROVALS}`, `card with ${APPROVALS}`]);
  });
});
