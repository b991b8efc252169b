import { pino } from 'pino';
import { expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { approve, openStep } from './card-refreshes.test-support.js';
import type { CardCopy, PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';
import { showLatestStep } from './show-latest-step.js';

const logger = pino({ level: 'silent' });

function drawing() {
  const draws: Array<{ ts: string; phase: string }> = [];
  const messenger = {
    async updateStepCard({ step }: { step: PendingStep & { cardTs: string } }) {
      draws.push({ ts: step.cardTs, phase: step.phase });
    },
    async updateStepCopy({ step, copy }: { step: PendingStep; copy: CardCopy }) {
      draws.push({ ts: copy.ts, phase: step.phase });
    },
  } as unknown as ThreadMessenger;
  return { draws, messenger };
}

it('draws a final step once more when a copy was recorded outside the revision it was given', async () => {
  const store = createMemoryStore();
  const step = makeStep(['apv-1']);
  await openStep(store, step, 60 * 60_000);
  await store.setStepCard(step.stepId, 'card-1');
  await approve(store, step.stepId);
  // The decision's step, as it read it: the copy posted meanwhile is recorded outside its revision.
  const decided = (await store.getStep(step.stepId))!;
  await store.recordCardCopy(step.stepId, { kind: 'dm', userId: 'U0LEAD', channel: 'D0LEAD', ts: 'copy-1' });
  const { draws, messenger } = drawing();

  await showLatestStep({ store, messenger, step: decided, logger });

  expect(decided.phase).not.toBe('pending');
  expect(draws.filter((draw) => draw.ts === 'copy-1')).toEqual([{ ts: 'copy-1', phase: decided.phase }]);
});

it('reads once and stops when the record is what it drew', async () => {
  const store = createMemoryStore();
  const step = makeStep(['apv-1']);
  await openStep(store, step, 60 * 60_000);
  await store.setStepCard(step.stepId, 'card-1');
  await store.recordCardCopy(step.stepId, { kind: 'channel', channel: 'C0APPROVALS', ts: 'copy-1' });
  const stored = (await store.getStep(step.stepId))!;
  const { draws, messenger } = drawing();

  await showLatestStep({ store, messenger, step: stored, logger });

  expect(draws.map((draw) => draw.ts).sort()).toEqual(['card-1', 'copy-1']);
});
