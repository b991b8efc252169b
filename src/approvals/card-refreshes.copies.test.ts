import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { SlackCallError } from '../errors/countersign-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createCardRefreshes, keepCardToRedraw } from './card-refreshes.js';
import { copyChannel, openStep, refreshesPostingCopies, stepRoutedTo } from './card-refreshes.test-support.js';
import type { CardCopy, PendingStep } from './pending-step.js';

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
    const step = stepRoutedTo({ thread: false, channels: [APPROVALS] });
    await openStep(store, step, 60 * 60_000);
    await store.setStepCard(step.stepId, 'card-1');

    const events: string[] = [];
    const messenger = {
      async updateStepCard({ step: drawn }: { step: PendingStep }) {
        events.push(`card with ${(drawn.copies ?? []).map((copy) => copy.channel).join(',') || 'no copies'}`);
      },
      async updateStepCopy() {},
      async postStepCopy({ target }: { target: CardCopyTarget }) {
        const channel = copyChannel(target);
        events.push(`copy in ${channel}`);
        return { kind: target.kind, channel, ts: `copy-${events.length}` };
      },
    } as unknown as ThreadMessenger;
    const takeBacks = { takeBack: async () => {} };
    const refreshes = refreshesPostingCopies({ store, messenger, takeBacks, logger, failure: 'could not post copies' });

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

/**
 * A card refresh draws the thread's card and every copy; a copy whose chat.update Slack failed for now
 * (a 503) was only logged, and the refresh ended once the thread's card was drawn: the copy in
 * #approvals kept an older revision's state (and live buttons) for good. One Slack refuses for good is
 * only logged: nothing is posted again for it.
 */
describe('a card refresh whose copy update Slack fails', () => {
  const setUp = async (failure: SlackCallError) => {
    let clock = 1_000_000;
    const now = () => clock;
    const store = createMemoryStore({ now });
    const step = stepRoutedTo({ thread: true, channels: [APPROVALS] });
    await openStep(store, step, 7 * 24 * 3_600_000);
    await store.setStepCard(step.stepId, 'card-1');
    await store.recordCardCopy(step.stepId, { kind: 'channel', channel: APPROVALS, ts: 'copy-1' });

    let copyFailures = 1;
    const events: string[] = [];
    const messenger = {
      async updateStepCard() {
        events.push('card');
      },
      async updateStepCopy({ step: drawn }: { step: PendingStep; copy: CardCopy }) {
        if (copyFailures > 0) {
          copyFailures -= 1;
          throw failure;
        }
        events.push(`copy at revision ${drawn.revision}`);
      },
      async postStepCard() {
        events.push('card posted again');
        return 'card-2';
      },
    } as unknown as ThreadMessenger;
    const refreshes = createCardRefreshes({ store, messenger, takeBacks: { takeBack: async () => {} }, logger, now, pause: async (ms) => void (clock += ms) });

    // A refresh kept for this card (a decision's chat.update got a 503), due now: the sweep draws it.
    await keepCardToRedraw({ store, stepId: step.stepId, logger, at: clock });
    for (let i = 0; i < 3; i += 1) {
      await refreshes.retryDue();
      clock += 3_600_000;
    }
    return { events, kept: await store.dueCardRefreshes({ now: clock, limit: 10 }) };
  };

  it('draws the copy again later when Slack failed it for now (a 503)', async () => {
    const { events, kept } = await setUp(new SlackCallError({ method: 'chat.update', cause: new Error('An HTTP protocol error occurred: statusCode = 503'), tryLater: true }));
    expect({ copyDrawn: events.filter((event) => event.startsWith('copy')), posted: events.filter((event) => event.includes('posted')), kept }).toEqual({
      copyDrawn: ['copy at revision 0'],
      posted: [],
      kept: [],
    });
  });

  it('leaves the copy, logged, when Slack refuses it for good (the thread card is not posted again)', async () => {
    const { events, kept } = await setUp(new SlackCallError({ method: 'chat.update', cause: new Error('An API error occurred: cant_update_message'), tryLater: false }));
    expect({ events, kept }).toEqual({ events: ['card'], kept: [] });
  });
});
