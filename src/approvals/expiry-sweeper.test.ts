import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { recoverStalledWork } from '../conversation/recover-stalled-work.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createThreadWorker } from '../conversation/thread-worker.js';
import { encodeWorkItem, type WorkItem } from '../conversation/work-item.js';
import { createRedisStore } from '../store/redis-store.js';
import { newStepId } from '../store/redis-keys.js';
import { newThreadState } from '../store/thread-state.js';
import { createExpirySweeper } from './expiry-sweeper.js';
import { makeStep } from './pending-step.test-support.js';
import { deferred } from '../../test/helpers/deferred.js';

const logger = pino({ level: 'silent' });

/** Resolves when `promise` does, or with 'timed-out' after `ms`: a bound for the failure message, not a wait before checking. */
const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise, new Promise<'timed-out'>((resolve) => setTimeout(() => resolve('timed-out'), ms).unref())]);

describe('expiry sweep while the turn of an expired step runs', () => {
  it("resumes the other expired step and recovers a stalled thread without waiting for that turn", async () => {
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` });
    const now = 1_900_000_000_000;
    const [first, second, stalled] = ['1700000000.000100', '1700000000.000200', '1700000000.000300'];
    try {
      // Two threads, each with a step that expired a minute ago: both due in the same sweep.
      for (const threadTs of [first, second]) {
        const base = makeStep(['apv-1'], { threadTs, createdAt: now - 120_000, expiresAt: now - 60_000 });
        const step = { ...base, stepId: newStepId(base.threadKey) };
        const token = (await store.tryLock(step.threadKey, 60_000))!;
        const fence = { threadKey: step.threadKey, token };
        await store.createStep({ step, thread: { ...newThreadState(step, now - 120_000), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence });
        expect(await store.releaseLockIfIdle(fence, 60_000)).toBe('released');
      }
      // A third thread with a queued message and no lock: a dead process's, or a hand-off whose hint was lost.
      const message: WorkItem = { kind: 'message', userId: 'U1', text: 'hi', ts: stalled, teamId: 'T0TEAM', channel: 'C0OPS', threadTs: stalled, readEarlierMessages: false };
      await store.handOffWork(`T0TEAM:C0OPS:${stalled}`, encodeWorkItem(message));

      const started = new Map([first, second, stalled].map((threadTs) => [threadTs, deferred()]));
      const firstTurnMayEnd = deferred();
      const worker = createThreadWorker({
        store,
        logger,
        handle: async (item) => {
          started.get(item.threadTs)?.resolve();
          // The first thread's resumed turn is a long one (the model goes on after the expiry, runs a command…).
          if (item.threadTs === first) await firstTurnMayEnd.promise;
        },
      });
      const messenger = { updateStepCard: async () => {}, updateStepCopy: async () => {}, postMention: async () => {}, postNotice: async () => {} } as unknown as ThreadMessenger;
      const sweeper = createExpirySweeper({ store, messenger, worker, logger, now: () => now, alsoRun: () => recoverStalledWork({ store, worker, now: () => now, graceMs: 30_000, logger }) });
      try {
        const sweep = sweeper.sweepOnce();
        await started.get(first)!.promise;
        const others = await within(Promise.all([started.get(second)!.promise, started.get(stalled)!.promise, sweep]).then(() => 'all started'), 10_000);
        expect(others).toBe('all started');
      } finally {
        firstTurnMayEnd.resolve();
        await worker.idle();
      }
    } finally {
      await store.close();
    }
  });
});
