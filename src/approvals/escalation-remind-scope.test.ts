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
 * README: "A step with several calls follows the ladder of its first call that has one, and its hops
 * reach only the calls under that call's rule: a call under another rule … waits for that rule's own
 * approvers." The add-approvers half of a hop keeps to that (`callsOnStepLadder`), the remind half
 * does not: `announceHop` calls `remind(step)`, which mentions the approvers of every waiting call.
 * And `escalateTransition` keeps making hops after every call under the ladder's rule is decided
 * (the card stops showing the ladder then), so the prod rule's approver, whose rule has no reminder
 * and no ladder, is pinged "Reminder (stage 2 of 2)" about the prod call by the staging rule's ladder.
 */
describe('a reminding hop of a step with a call under another rule', () => {
  it('reminds only the approvers of the calls under the ladder\'s rule', async () => {
    const store = createMemoryStore();
    const ladder = [{ afterMs: 100, remind: true, addApprovers: [] }];
    const step = makeStep([
      { approvalId: 'apv-1', policy: evaluation({ rule: { index: 1, fingerprint: 'staging' }, approvers: [{ kind: 'user', userId: 'U0STAGEOWNER' }], escalation: ladder }) },
      { approvalId: 'apv-2', input: { service: 'db', namespace: 'prod' }, policy: evaluation({ rule: { index: 0, fingerprint: 'prod' }, approvers: [{ kind: 'user', userId: 'U0SRELEAD' }] }) },
    ]);
    step.calls[1]!.toolName = 'scale_service';
    step.escalation = { ladder, rule: { index: 1, fingerprint: 'staging' }, done: 0, nextAt: step.createdAt + 100 };
    step.expiresAt = step.createdAt + 60_000;
    // The staging call was approved before its hop; the prod call still waits for the SRE lead.
    step.decisions['apv-1'] = { outcome: 'approved', userId: 'U0STAGEOWNER', at: step.createdAt + 50 };
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const mentions: string[] = [];
    const messenger = {
      postMention: async ({ text }: { text: string }) => void mentions.push(text),
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
    } as unknown as ThreadMessenger;
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 150 }).sweepOnce();

    expect(mentions.filter((text) => text.includes('U0SRELEAD') || text.includes('scale_service'))).toEqual([]);
    // The ladder stopped: the step keeps no next hop, and no sweep finds it again.
    expect((await store.getStep(step.stepId))?.escalation).toMatchObject({ done: 0 });
    expect((await store.getStep(step.stepId))?.escalation?.nextAt).toBeUndefined();
    expect(await store.dueSteps({ kind: 'escalation', now: step.createdAt + 10_000, limit: 10 })).toEqual([]);
  });

  it('while a call under the ladder\'s rule waits, reminds its approvers about it alone', async () => {
    const store = createMemoryStore();
    const ladder = [{ afterMs: 100, remind: true, addApprovers: [] }];
    const step = makeStep([
      { approvalId: 'apv-1', policy: evaluation({ rule: { index: 1, fingerprint: 'staging' }, approvers: [{ kind: 'user', userId: 'U0STAGEOWNER' }], escalation: ladder }) },
      { approvalId: 'apv-2', input: { service: 'db', namespace: 'prod' }, policy: evaluation({ rule: { index: 0, fingerprint: 'prod' }, approvers: [{ kind: 'user', userId: 'U0SRELEAD' }] }) },
    ]);
    step.calls[1]!.toolName = 'scale_service';
    step.escalation = { ladder, rule: { index: 1, fingerprint: 'staging' }, done: 0, nextAt: step.createdAt + 100 };
    step.expiresAt = step.createdAt + 60_000;
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const mentions: string[] = [];
    const messenger = {
      postMention: async ({ text }: { text: string }) => void mentions.push(text),
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
    } as unknown as ThreadMessenger;
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 150 }).sweepOnce();

    const reminders = mentions.filter((text) => text.includes('Reminder'));
    expect(reminders).toHaveLength(1);
    expect(reminders[0]).toContain('<@U0STAGEOWNER>');
    expect(reminders[0]).toContain(`\`${step.calls[0]!.toolName}\``);
    expect(reminders[0]).not.toContain('U0SRELEAD');
    expect(reminders[0]).not.toContain('scale_service');
    expect((await store.getStep(step.stepId))?.escalation?.done).toBe(1);
  });
});
