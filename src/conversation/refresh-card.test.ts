import { pino } from 'pino';
import { expect, it } from 'vitest';
import { approve, openStep } from '../approvals/card-refreshes.test-support.js';
import type { CardCopy, PendingStep } from '../approvals/pending-step.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { createMemoryStore } from '../store/memory-store.js';
import { refreshCard } from './refresh-card.js';
import type { ThreadMessenger } from './thread-messenger.js';

const logger = pino({ level: 'silent' });

// A step whose first card's post answered with its outcome not known (looked for by the sweep) has no
// card on record but its copies, posted all the same: a turn's change of the step is shown on them.
it('draws the copies of a step with no thread card on record', async () => {
  const drawn: string[] = [];
  const messenger = {
    updateStepCard: async () => void drawn.push('card'),
    updateStepCopy: async ({ copy }: { step: PendingStep; copy: CardCopy }) => void drawn.push(copy.ts),
  } as unknown as ThreadMessenger;
  const step = makeStep(['restart_service'], { copies: [{ kind: 'channel', channel: 'C0APPROVALS', ts: 'copy-1' }] });
  await refreshCard({ scope: { messenger }, step, logger, store: createMemoryStore(), now: Date.now });
  expect(drawn).toEqual(['copy-1']);
});

/**
 * A turn's draw of the step (its copies just posted, `postCopies`) may land after a decision's own
 * draw: the decision, final, is drawn once, so the turn's draw must read the step again and show it.
 */
it('a decision written while the card was being drawn is what the card and its copy show last', async () => {
  const store = createMemoryStore();
  const step: PendingStep = makeStep(['apv-1']);
  await openStep(store, step, 60 * 60_000);
  await store.setStepCard(step.stepId, 'card-1');
  await store.recordCardCopy(step.stepId, { kind: 'channel', channel: 'C0APPROVALS', ts: 'copy-1' });
  const read = (await store.getStep(step.stepId))!;

  const shown = new Map<string, string>();
  let decideWhileDrawing = true;
  const messenger = {
    async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
      // Bob approves while this update is on its way; his own draw lands first.
      if (decideWhileDrawing) {
        decideWhileDrawing = false;
        await approve(store, step.stepId);
        const decided = (await store.getStep(step.stepId))!;
        shown.set('card-1', decided.phase);
        shown.set('copy-1', decided.phase);
      }
      shown.set(drawn.cardTs, drawn.phase);
    },
    async updateStepCopy({ step: drawn, copy }: { step: PendingStep; copy: CardCopy }) {
      shown.set(copy.ts, drawn.phase);
    },
  } as unknown as ThreadMessenger;

  await refreshCard({ scope: { messenger }, step: read, logger, store, now: Date.now });

  const final = (await store.getStep(step.stepId))!;
  expect(final.phase).not.toBe('pending');
  expect({ card: shown.get('card-1'), copy: shown.get('copy-1') }).toEqual({ card: final.phase, copy: final.phase });
});
