import { pino } from 'pino';
import { expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { click, createTestDecider } from './decide-call.test-support.js';
import { createExpirySweeper } from './expiry-sweeper.js';
import type { PendingStep } from './pending-step.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

const logger = pino({ level: 'silent' });
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

/**
 * An escalation hop is committed, announced (a mention in the thread), then drawn on the card from the
 * step as the hop left it, once, never read again. A click that decides the request after the hop's
 * write draws the decision (once: a decided step is final); when it lands before the hop's draw, the hop's
 * draw of the older, still-waiting step comes last: the card shows "waiting" and live Approve/Deny
 * buttons on a request already approved (its call run), for good.
 */
it('a hop drawn after a click decided the request leaves the card showing the decision', async () => {
  const store = createMemoryStore();
  const createdAt = Date.now();
  const ladder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'user' as const, userId: 'U0LEAD' }] }];
  const step: PendingStep = makeStep([{ approvalId: 'apv1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: ladder }) }], { createdAt });
  step.escalation = { ladder, rule: { index: 0 }, done: 0, nextAt: createdAt + 100 };
  step.expiresAt = createdAt + 60 * 60_000;
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60 * 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
  await store.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);
  await store.setStepCard(step.stepId, 'card-1');

  const card: string[] = [];
  let decide: () => Promise<void> = async () => {};
  const messenger = {
    // The hop's mention: while Slack posts it, U0OPS approves on the card.
    postMention: async () => decide(),
    updateStepCard: async ({ step: drawn }: { step: PendingStep }) => void card.push(drawn.phase),
    updateStepCopy: async () => {},
  } as unknown as ThreadMessenger;
  const { decider } = createTestDecider({ store, messenger, evaluateInput: async ({ call }) => call.policy! });
  decide = async () => {
    const outcome = await decider.record(click(step, 'U0OPS', { kind: 'approve', version: 0 }));
    expect(outcome.recorded).toBe(true);
    await decider.publish(outcome);
  };

  await createExpirySweeper({ store, messenger, worker, logger, now: () => createdAt + 150 }).sweepOnce();

  const final = (await store.getStep(step.stepId))!;
  expect(final.escalation?.done).toBe(1);
  expect(final.phase).not.toBe('pending');
  // The card's last draw shows the request as it stands.
  expect(card.at(-1)).toBe(final.phase);
});
