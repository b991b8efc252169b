import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory-store.js';
import { createCardRefreshes, keepFirstCardToFind } from './card-refreshes.js';
import { approve, openStep, takingBackInto } from './card-refreshes.test-support.js';
import type { PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';

const POST = { mark: 'countersign_post_1', text: 'Approval needed', after: '1700000000.000100' };

/**
 * An open step whose first card's post lost its reply while the thread could not be read: the look
 * for it is kept, and the sweep finds the card as `found` says (its ts, or undefined: not posted).
 */
async function world(options: { found: string | undefined }) {
  let clock = 1_000_000;
  const now = () => clock;
  const store = createMemoryStore({ now });
  const step = makeStep(['apv-1']);
  await openStep(store, step, 60 * 60_000);
  const shown: Array<{ ts: string; revision: number }> = [];
  const posted: string[] = [];
  const takenBack: string[] = [];
  const notices: string[] = [];
  const messenger = {
    async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
      shown.push({ ts: drawn.cardTs, revision: drawn.revision });
    },
    async updateStepCopy() {},
    async postStepCard() {
      posted.push('card-fresh');
      return 'card-fresh';
    },
    findPostedCard: async () => options.found,
    permalinkOf: async () => undefined,
    async postNotice({ text }: { text: string }) {
      notices.push(text);
    },
  };
  const takeBacks = takingBackInto(takenBack);
  const logger = pino({ level: 'silent' });
  const refreshes = createCardRefreshes({ store, messenger, takeBacks, logger, now, pause: async () => {} });
  expect(await keepFirstCardToFind({ store, step, post: POST, logger, at: now() })).toBe(true);
  return {
    store,
    step,
    shown,
    posted,
    takenBack,
    notices,
    sweep: async () => {
      clock += 60_000;
      await refreshes.retryDue();
    },
    kept: () => store.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 100 }),
  };
}

describe("looking for a step's first card whose post lost its reply", () => {
  it('records the card found as the step\'s, draws it again if the step changed since, and tells the thread nothing', async () => {
    const w = await world({ found: 'card-found' });
    // A click on the card decided before it was recorded.
    await approve(w.store, w.step.stepId);
    await w.sweep();
    expect({ cardTs: (await w.store.getStep(w.step.stepId))?.cardTs, shown: w.shown, posted: w.posted, takenBack: w.takenBack, notices: w.notices, kept: await w.kept() }).toEqual({
      cardTs: 'card-found',
      shown: [{ ts: 'card-found', revision: 1 }],
      posted: [],
      takenBack: [],
      notices: [],
      kept: [],
    });
  });

  it('posts the card and records it when Slack did not post it', async () => {
    const w = await world({ found: undefined });
    await w.sweep();
    expect({ cardTs: (await w.store.getStep(w.step.stepId))?.cardTs, posted: w.posted, kept: await w.kept() }).toEqual({ cardTs: 'card-fresh', posted: ['card-fresh'], kept: [] });
  });

  it('takes the card found back when another card of the step was recorded first', async () => {
    const w = await world({ found: 'card-found' });
    await w.store.setStepCard(w.step.stepId, 'card-other');
    await w.sweep();
    expect({ cardTs: (await w.store.getStep(w.step.stepId))?.cardTs, takenBack: w.takenBack, kept: await w.kept() }).toEqual({ cardTs: 'card-other', takenBack: ['card-found'], kept: [] });
  });
});
