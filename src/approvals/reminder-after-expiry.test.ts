import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createExpirySweeper } from './expiry-sweeper.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

const logger = pino({ level: 'silent' });
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

/**
 * The first sweep after every replica was down across a request's reminder and its expiry (a deploy,
 * an outage, a backlog past the 20-per-sweep batch) finds both due. Reminders are swept before
 * expiries and `remind` checks only that the step is still pending, not that it is before its
 * deadline: the approvers are pinged "Approval still needed … It expires <a time already past>" for a
 * request that the very same sweep then closes as expired.
 */
describe('a reminder found due together with the expiry', () => {
  it('is not posted for a request already past its expiry', async () => {
    const store = createMemoryStore();
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS' }], expiryMs: 600_000, reminderMs: 300_000 }) }]);
    step.expiresAt = step.createdAt + 600_000;
    step.remindAt = step.createdAt + 300_000;
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const mentions: string[] = [];
    const messenger = {
      postMention: async ({ text }: { text: string }) => void mentions.push(text),
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
    } as unknown as ThreadMessenger;
    // The first sweep after the outage: 15 minutes after the request, 5 past its expiry.
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 900_000 }).sweepOnce();

    expect((await store.getStep(step.stepId))?.decisions['apv-1']?.outcome).toBe('expired');
    expect(mentions.filter((text) => text.includes('Approval still needed'))).toEqual([]);
    // Taken off the schedule all the same: no later sweep sends it either.
    expect(await store.dueSteps({ kind: 'reminder', now: step.createdAt + 900_000, limit: 10 })).toEqual([]);
  });

  it('is not posted once the expiry the config in force sets has passed', async () => {
    const store = createMemoryStore();
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS' }], expiryMs: 3_600_000, reminderMs: 1_800_000 }) }]);
    step.expiresAt = step.createdAt + 3_600_000;
    step.remindAt = step.createdAt + 1_800_000;
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 7_200_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const mentions: string[] = [];
    const messenger = { postMention: async ({ text }: { text: string }) => void mentions.push(text) } as unknown as ThreadMessenger;
    // A deploy shortened the rule's expiry to 20 minutes: the request can no longer be approved at 30.
    const inForce = evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS' }], expiryMs: 1_200_000 });
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 1_800_000, currentEvaluation: async () => inForce }).sweepOnce();

    expect(mentions).toEqual([]);
    expect(await store.dueSteps({ kind: 'reminder', now: step.createdAt + 1_800_000, limit: 10 })).toEqual([]);
  });
});
