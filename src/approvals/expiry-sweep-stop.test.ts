import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createThreadWorker } from '../conversation/thread-worker.js';
import { createRedisStore } from '../store/redis-store.js';
import { newStepId } from '../store/redis-keys.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createExpirySweeper } from './expiry-sweeper.js';
import { makeStep } from './pending-step.test-support.js';
import { deferred } from '../../test/helpers/deferred.js';

const logger = pino({ level: 'silent' });

describe('expiry sweep under way when its process is told to stop (SIGTERM)', () => {
  it('expires no further step on the way out: their resumes, new turns, are left to a live replica', async () => {
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` });
    const now = 1_900_000_000_000;
    const stepIds: string[] = [];
    try {
      // Two steps that expired a minute ago: both due in the same sweep.
      for (const threadTs of ['1700000000.000100', '1700000000.000200']) {
        const base = makeStep(['apv-1'], { threadTs, createdAt: now - 120_000, expiresAt: now - 60_000 });
        const step = { ...base, stepId: newStepId(base.threadKey) };
        const fence = { threadKey: step.threadKey, token: (await store.tryLock(step.threadKey, 60_000))! };
        await store.createStep({ step, thread: { ...newThreadState(step, now - 120_000), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence });
        expect(await store.releaseLockIfIdle(fence, 60_000)).toBe('released');
        stepIds.push(step.stepId);
      }
      const resumed: string[] = [];
      const worker = createThreadWorker({ store, logger, handle: async (item) => void (item.kind === 'resume' && resumed.push(item.stepId)) });
      // The first expiry's write (with its resume's claim) is on its way when the stop comes.
      const writing = deferred();
      const mayAnswer = deferred();
      let writes = 0;
      const sweeping: StateStore = {
        ...store,
        commitStepAndQueue: async (...args) => {
          const committed = await store.commitStepAndQueue(...args);
          writes += 1;
          if (writes === 1) {
            writing.resolve();
            await mayAnswer.promise;
          }
          return committed;
        },
      };
      const messenger = { updateStepCard: async () => {}, updateStepCopy: async () => {}, postMention: async () => {}, postNotice: async () => {} } as unknown as ThreadMessenger;
      const sweeper = createExpirySweeper({ store: sweeping, messenger, worker, logger, now: () => now });
      const sweep = sweeper.sweepOnce();
      await writing.promise;
      const stopped = sweeper.stop();
      mayAnswer.resolve();
      await Promise.all([sweep, stopped]);
      await worker.idle();
      const phases = await Promise.all(stepIds.map(async (stepId) => (await store.getStep(stepId))?.phase));
      // One expired (and resumed: its claim was in hand), the other still pending, for another process's sweep.
      expect(phases.filter((phase) => phase === 'pending')).toHaveLength(1);
      expect(resumed).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
