import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import type { StateStore } from '../../store/state-store.js';
import { redisDown } from './bolt-listener.test-support.js';
import { readCall, UNREADABLE_CALL_TEXT } from './read-call.js';

const logger = pino({ level: 'silent' });

/** A store whose first `failures` reads fail as a Redis that is down does, then return `step`. */
function recoveringStore(step: ReturnType<typeof makeStep>, failures: number) {
  let reads = 0;
  const store = {
    getStep: async () => {
      reads += 1;
      if (reads <= failures) throw redisDown();
      return step;
    },
  } as unknown as StateStore;
  return { store, reads: () => reads };
}

describe('reading the call a click refers to', () => {
  it('waits out a store that is unavailable for a moment, within the wait it was given', async () => {
    const step = makeStep(['apv1']);
    const { store, reads } = recoveringStore(step, 1);
    const lookup = await readCall({ store, logger, reference: { stepId: step.stepId, approvalId: 'apv1' }, storeWaitMs: 5_000 });
    expect(lookup).toMatchObject({ open: true, call: { approvalId: 'apv1' } });
    expect(reads()).toBe(2);
  });

  it('answers with what to tell the person when the store cannot be read, instead of throwing', async () => {
    const step = makeStep(['apv1']);
    const { store } = recoveringStore(step, 1);
    expect(await readCall({ store, logger, reference: { stepId: step.stepId, approvalId: 'apv1' } })).toEqual({ open: false, unreadable: true, message: UNREADABLE_CALL_TEXT });
  });
});
