import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { deferred } from '../../test/helpers/deferred.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createThreadWorker } from '../conversation/thread-worker.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createCallDecider } from './decide-call.js';
import { click, DECIDER_CONFIG, stepFor, storeStep } from './decide-call.test-support.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';

const logger = pino({ level: 'silent' });

/**
 * A click's claimed resume is counted by `worker.idle()` until its drain begins: the click's decision
 * write takes the thread's lock with its own resume (the claim), and `drainClaimed` is called only
 * after the card is drawn (`publish`: showDecisions, copies for an edit), so the decision hands the
 * claim to the worker at once (`claimTaken`). A stop that waits for the worker before it closes the
 * store (once its 10 s wait for Slack requests is over) therefore resolves only once that resume has
 * run or been handed back (offered on the ready list, the lock released). Before a95048b nothing in the
 * worker counted the claim until `drainClaimed`, and `idle()` resolved with the lock taken and the
 * resume neither run nor handed back.
 */
describe('a click whose card update is slow when the process stops', () => {
  it('is waited for by worker.idle(): its claimed resume runs (or is handed back) before idle resolves', async () => {
    const store = createMemoryStore();
    const handled: string[] = [];
    const worker = createThreadWorker({ store, logger, handle: async (item) => void handled.push(item.kind) });
    const cardAsked = deferred();
    const cardMayAnswer = deferred();
    const decider = createCallDecider({
      store,
      messenger: {
        updateStepCard: async () => {
          cardAsked.resolve();
          await cardMayAnswer.promise;
        },
      } as unknown as ThreadMessenger,
      worker,
      logger,
      audit: createMemoryAuditLog({ logger }),
      resolveGroups: async () => new Map(),
      evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: DECIDER_CONFIG.policy, toolName: call.toolName, channel: 'C0OPS', input }),
    });
    const step = await storeStep(store, stepFor('scale', { cardTs: '1700000000.000200' }));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toMatchObject({ recorded: true, completedStep: true, claim: expect.anything() });
    const publishing = outcome.recorded ? decider.publish(outcome) : undefined;
    await cardAsked.promise;
    // SIGTERM: the stop's wait for Slack requests ran out; it now waits for the worker, then closes the store.
    worker.stopTaking();
    await worker.idle();
    const offered = await store.nextReadyThreads({ timeoutMs: 200, max: 5 });
    const lockFree = (await store.tryLock(step.threadKey, 1_000)) !== undefined;
    try {
      expect(
        { ran: handled, handedBack: offered.includes(step.threadKey) && lockFree },
        "worker.idle() resolved with the click's own resume claimed (lock held) but neither run nor handed back",
      ).toSatisfy((state: { ran: string[]; handedBack: boolean }) => state.ran.includes('resume') || state.handedBack);
    } finally {
      cardMayAnswer.resolve();
      await publishing;
    }
  });
});
