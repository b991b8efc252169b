import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { keepCardToRedraw } from './card-refreshes.js';
import { copyChannel, openStep, refreshesPostingCopies, stepRoutedTo } from './card-refreshes.test-support.js';
import { withMissingCopies } from './post-card-copies.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';

/**
 * The card refresh posts the copies the step's routing lacks on every refresh of an open step,
 * beside the paths that post copies too (a recorded edit's `postCopiesForEdit`, an escalation hop,
 * the first post): two of them may each read the step without a copy and post one. The first copy
 * recorded in a channel is the step's; the other is taken back, not left with live buttons nobody
 * updates.
 */
describe('copies posted by a card refresh while a recorded edit posts them', () => {
  it('leave one copy per channel: the first recorded; the other is taken back', async () => {
    const store = createMemoryStore();
    // As a recorded edit left it: routed to #approvals only, its copy not posted yet.
    const step = stepRoutedTo({ thread: false, channels: [APPROVALS] });
    await openStep(store, step, 60 * 60_000);
    await store.setStepCard(step.stepId, 'card-1');
    // A refresh kept earlier for this card (an approval's chat.update got a 503), due now.
    await keepCardToRedraw({ store, stepId: step.stepId, logger, at: Date.now() });

    const copiesPosted: string[] = [];
    const takenBack: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let firstStarted!: () => void;
    const firstPosting = new Promise<void>((resolve) => {
      firstStarted = resolve;
    });
    const messenger = {
      async updateStepCard() {},
      async updateStepCopy() {},
      async postStepCopy({ target }: { target: CardCopyTarget }) {
        const channel = copyChannel(target);
        const ts = `copy-${copiesPosted.length + 1}`;
        copiesPosted.push(`${channel}:${ts}`);
        // The edit's copy: Slack is slow to answer it.
        if (copiesPosted.length === 1) {
          firstStarted();
          await firstHeld;
        }
        return { kind: target.kind, channel, ts };
      },
    } as unknown as ThreadMessenger;
    const takeBacks = {
      async takeBack({ channel, ts }: { channel: string; ts: readonly string[] }) {
        takenBack.push(...ts.map((each) => `${channel}:${each}`));
      },
    };
    const refreshes = refreshesPostingCopies({ store, messenger, takeBacks, logger, failure: 'could not post copies' });

    // The recorded edit's publish (postCopiesForEdit) posts the copy...
    const editing = withMissingCopies({ store, messenger, takeBacks, logger, step: (await store.getStep(step.stepId))!, failure: 'could not post copies for an edited call' });
    await firstPosting;
    // ...while the sweep runs the refresh kept for the card.
    await refreshes.retryDue();
    releaseFirst();
    await editing;

    const recorded = (await store.getStep(step.stepId))?.copies?.map((copy) => `${copy.channel}:${copy.ts}`) ?? [];
    // The refresh's copy (copy-2) was recorded first, while the edit's post waited on Slack.
    expect({ recorded, orphans: copiesPosted.filter((copy) => !recorded.includes(copy) && !takenBack.includes(copy)) }).toEqual({ recorded: [`${APPROVALS}:copy-2`], orphans: [] });
    expect(takenBack).toEqual([`${APPROVALS}:copy-1`]);
  });
});
