import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory-store.js';
import { createCardRefreshes, keepFirstCardToFind } from './card-refreshes.js';
import { approve, openStep, takingBackInto } from './card-refreshes.test-support.js';
import type { PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';

/**
 * A request's first card whose post lost its reply, looked for by the sweep, when the link or the
 * record of the card it finds or posts fails: the request is left with one card, drawn as it stands.
 */

const POST = { mark: 'countersign_post_1', text: 'Approval needed', after: '1700000000.000100' };

async function world(options: { found: () => string | undefined; permalinkFails?: number; setStepCardReplyLost?: number; setStepCardFails?: number; withCopy?: boolean }) {
  let clock = 1_000_000;
  const now = () => clock;
  const memory = createMemoryStore({ now });
  const step = makeStep(['apv-1']);
  await openStep(memory, step, 48 * 60 * 60_000);
  // The turn posted the step's copies (without a link to the thread's card) after keeping the look.
  if (options.withCopy) await memory.recordCardCopy(step.stepId, { kind: 'channel', channel: 'C0APPROVALS', ts: 'copy-1' });
  let permalinkFails = options.permalinkFails ?? 0;
  let setStepCardReplyLost = options.setStepCardReplyLost ?? 0;
  let setStepCardFails = options.setStepCardFails ?? 0;
  // A Redis whose reply to the card's record is lost after the write ran (a dropped connection), or that fails it before.
  const store: typeof memory = {
    ...memory,
    async setStepCard(stepId, cardTs, link) {
      if (setStepCardFails > 0) {
        setStepCardFails -= 1;
        throw new Error('Connection is closed.');
      }
      const recorded = await memory.setStepCard(stepId, cardTs, link);
      if (setStepCardReplyLost > 0) {
        setStepCardReplyLost -= 1;
        throw new Error('Connection is closed.');
      }
      return recorded;
    },
  };
  const shown: Array<{ ts: string; revision: number }> = [];
  const posted: string[] = [];
  const takenBack: string[] = [];
  const messenger = {
    async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
      shown.push({ ts: drawn.cardTs, revision: drawn.revision });
    },
    async updateStepCopy() {},
    async postStepCard() {
      const ts = `card-fresh-${posted.length + 1}`;
      posted.push(ts);
      return ts;
    },
    findPostedCard: async () => options.found(),
    async permalinkOf() {
      if (permalinkFails > 0) {
        permalinkFails -= 1;
        throw new Error('chat.getPermalink: HTTP 503');
      }
      return 'https://slack.example/archives/C0OPS/p1';
    },
    async postNotice() {},
  };
  const takeBacks = takingBackInto(takenBack);
  const logger = pino({ level: 'silent' });
  const refreshes = createCardRefreshes({ store, messenger, takeBacks, logger, now, pause: async () => {} });
  expect(await keepFirstCardToFind({ store, step, post: POST, logger, at: now() })).toBe(true);
  return {
    store: memory,
    step,
    shown,
    posted,
    takenBack,
    sweep: async () => {
      // Past any claim's pause.
      clock += 60 * 60_000;
      await refreshes.retryDue();
    },
    kept: () => memory.dueCardRefreshes({ now: Number.MAX_SAFE_INTEGER, limit: 100 }),
  };
}

describe("looking for a step's first card whose post lost its reply, when its link or record fails", () => {
  it('a card the sweep posted (found absent) whose link failed is recorded without it, not left beside a second one', async () => {
    // Slack did not post the first card; the sweep posts it, but chat.getPermalink fails once (copies want the link).
    const w = await world({ found: () => undefined, permalinkFails: 1, withCopy: true });
    await w.sweep();
    await w.sweep();
    const cardTs = (await w.store.getStep(w.step.stepId))?.cardTs;
    // Every card posted for the step is either its card on record or taken back: none is left with live buttons nobody updates.
    const orphans = w.posted.filter((ts) => ts !== cardTs && !w.takenBack.includes(ts));
    expect({ cardTs, orphans, kept: await w.kept() }).toEqual({ cardTs: w.posted.at(-1), orphans: [], kept: [] });
  });

  it('a card the sweep posted (found absent) whose record the store failed is taken back, and a later try posts and records one', async () => {
    const w = await world({ found: () => undefined, setStepCardFails: 1 });
    await w.sweep();
    await w.sweep();
    const cardTs = (await w.store.getStep(w.step.stepId))?.cardTs;
    const orphans = w.posted.filter((ts) => ts !== cardTs && !w.takenBack.includes(ts));
    expect({ cardTs, posted: w.posted, orphans, kept: await w.kept() }).toEqual({ cardTs: 'card-fresh-2', posted: ['card-fresh-1', 'card-fresh-2'], orphans: [], kept: [] });
  });

  it('a card the sweep posted whose record reply was lost (the write landed) is kept as the step\'s, not taken back', async () => {
    const w = await world({ found: () => undefined, setStepCardReplyLost: 1 });
    await w.sweep();
    await w.sweep();
    expect({ cardTs: (await w.store.getStep(w.step.stepId))?.cardTs, posted: w.posted, takenBack: w.takenBack, kept: await w.kept() }).toEqual({ cardTs: 'card-fresh-1', posted: ['card-fresh-1'], takenBack: [], kept: [] });
  });

  it('a card found and recorded whose record reply was lost is still drawn as the step stands (a click decided before the record)', async () => {
    const w = await world({ found: () => 'card-found', setStepCardReplyLost: 1 });
    // Approve on the (unrecorded) card decided the step: nothing could draw it yet.
    await approve(w.store, w.step.stepId);
    await w.sweep();
    await w.sweep();
    expect({ cardTs: (await w.store.getStep(w.step.stepId))?.cardTs, kept: await w.kept() }).toEqual({ cardTs: 'card-found', kept: [] });
    // The card still shows the Approve/Deny buttons of revision 0 unless it is drawn at revision 1.
    expect(w.shown, 'the card found is never drawn with the approval: its buttons stay live').toContainEqual({ ts: 'card-found', revision: 1 });
  });

  it('a card found and recorded by a try whose process stopped before drawing it is drawn as the step stands', async () => {
    const w = await world({ found: () => 'card-found' });
    // Approve on the (unrecorded) card decided the step; then a sweep recorded the card and its process stopped.
    await approve(w.store, w.step.stepId);
    await w.store.setStepCard(w.step.stepId, 'card-found');
    await w.sweep();
    expect({ shown: w.shown, takenBack: w.takenBack, kept: await w.kept() }).toEqual({ shown: [{ ts: 'card-found', revision: 1 }], takenBack: [], kept: [] });
  });
});
