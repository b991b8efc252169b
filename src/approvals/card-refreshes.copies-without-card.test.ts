import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { copyChannel, openStep, refreshesPostingCopies, stepRoutedTo } from './card-refreshes.test-support.js';
import type { PendingStep } from './pending-step.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';
const SRE = 'C0SRE';

/**
 * decide-call's publish, for a decision whose outcome was not known (`unsettled`), posts no copies itself: the
 * card refresh's tryAgain runs create-bot's `copies` hook, which posts the copies the step's routing lacks (an
 * edit that landed under a rule routed elsewhere). It must do so for a step with no thread card on record too
 * (its first card's post unconfirmed, looked for by the sweep), as for one with a card.
 */
describe('an unsettled edit routed elsewhere, on a step whose first card is not on record', () => {
  async function setUp(cardTs: string | undefined) {
    const clock = 1_000_000;
    const now = () => clock;
    const store = createMemoryStore({ now });
    // The version waiting is under a rule routed to #sre (an edit landed, its reply lost); the step has the #approvals copy of the earlier rule.
    const step = stepRoutedTo({ thread: true, channels: [SRE] });
    await openStep(store, step, 7 * 24 * 3_600_000);
    if (cardTs !== undefined) await store.setStepCard(step.stepId, cardTs, 'https://slack.example/card');
    await store.recordCardCopy(step.stepId, { kind: 'channel', channel: APPROVALS, ts: 'copy-1' });

    const posted: string[] = [];
    let next = 0;
    const messenger = {
      async updateStepCard() {},
      async updateStepCopy() {},
      async postStepCopy({ target }: { step: PendingStep; target: CardCopyTarget }) {
        const channel = copyChannel(target);
        posted.push(channel);
        next += 1;
        return { kind: target.kind, channel, ts: `copy-new-${next}` };
      },
    } as unknown as ThreadMessenger;
    const takeBacks = { takeBack: async () => {} };
    const refreshes = refreshesPostingCopies({ store, messenger, takeBacks, logger, now, pause: async () => {}, failure: 'could not post copies of an approval card drawn again' });
    return { store, step, refreshes, posted };
  }

  it('control: with the thread card on record, the #sre copy is posted by the redraw', async () => {
    const { refreshes, step, posted } = await setUp('card-1');
    // As decide-call's publish does for an unsettled decision.
    await refreshes.redraw({ stepId: step.stepId, error: new Error('reply lost'), untilStoreAnswers: true });
    expect(posted).toEqual([SRE]);
  });

  it('with no thread card on record, the #sre copy is posted by the redraw too', async () => {
    const { refreshes, step, posted, store } = await setUp(undefined);
    await refreshes.redraw({ stepId: step.stepId, error: new Error('reply lost'), untilStoreAnswers: true });
    expect(posted).toEqual([SRE]);
    expect((await store.getStep(step.stepId))?.copies?.map((copy) => copy.channel)).toEqual([APPROVALS, SRE]);
  });
});
