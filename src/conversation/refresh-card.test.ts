import { pino } from 'pino';
import { expect, it } from 'vitest';
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
