import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { inputHash } from '../approvals/input-version.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import type { Withdrawal } from './carried-approvals.js';
import type { TurnScope } from './turn-scope.js';
import { createWithdrawalsOnSteps } from './withdrawals-on-steps.js';

const logger = pino({ level: 'silent' });
const INPUT = { service: 'api', namespace: 'staging' };
const REVOKED: Decision = { outcome: 'denied', userId: 'countersign', at: 2, reason: 'the approval by <@U0BOB> no longer holds' };

/** Try again withdrawing carried approvals: written on their steps with the thread and its audit, then shown on the cards. */
describe('createWithdrawalsOnSteps', () => {
  function setUp(options: { stepGone?: boolean } = {}) {
    let step: PendingStep | undefined = options.stepGone
      ? undefined
      : { ...makeStep(['a1'], { phase: 'resumed', cardTs: '1700000000.000200' }), decisions: { a1: { outcome: 'approved', userId: 'U0BOB', at: 1, version: 0, inputHash: inputHash(INPUT), approvedBy: ['U0BOB'] } } };
    const stepId = step?.stepId ?? 'step-gone';
    const writes: Array<{ kind: 'save' | 'step'; audit: readonly AuditEventInput[] }> = [];
    const refreshes: string[] = [];
    const cards: PendingStep[] = [];
    const store = {
      getStep: async () => structuredClone(step),
      scheduleCardRefresh: async () => void refreshes.push('kept'),
      forgetCardRefresh: async () => {
        refreshes.push('forgotten');
        return true;
      },
    } as unknown as StateStore;
    const scope = {
      lease: { fence: { threadKey: 'T:C:1', token: '1' } },
      messenger: { updateStepCard: async ({ step: shown }: { step: PendingStep }) => void cards.push(shown), updateStepCopy: async () => {} },
      save: async (_thread: ThreadState, saveOptions?: { audit?: readonly AuditEventInput[] }) => void writes.push({ kind: 'save', audit: saveOptions?.audit ?? [] }),
      saveWithStep: async (transition: StepTransition) => {
        step = structuredClone(transition.step);
        writes.push({ kind: 'step', audit: transition.audit });
        return 'committed';
      },
    } as unknown as TurnScope;
    const thread = step ? newThreadState(step, 1) : ({ threadKey: 'T:C:1' } as ThreadState);
    const withdrawal = (closing?: Decision): Withdrawal => ({
      approval: { toolCallId: 'call_0', toolName: 'restart_service', stepId, approvalId: 'a1', version: 0, inputHash: inputHash(INPUT), approvedBy: ['U0BOB'] },
      userId: 'U0BOB',
      code: closing ? 'approval-revoked' : 'approval-not-on-record',
      reason: 'left the group',
      told: 'not run',
      ...(closing ? { closing } : {}),
    });
    const audit = [{ type: 'action-refused', approvalId: 'a1' } as unknown as AuditEventInput];
    const save = (withdrawn: Withdrawal[]) => createWithdrawalsOnSteps({ store, logger, now: () => 2 })(scope, thread, { withdrawn, audit });
    return { save, withdrawal, writes, refreshes, cards, audit, storedStep: () => step };
  }

  it('closes a revoked approval on its step in the write of the thread and its audit, and shows it on the card', async () => {
    const { save, withdrawal, writes, refreshes, cards, audit, storedStep } = setUp();
    await save([withdrawal(REVOKED)]);
    expect(writes).toEqual([{ kind: 'step', audit }]);
    expect(storedStep()?.decisions.a1).toEqual(REVOKED);
    expect(cards.map((card) => card.decisions.a1)).toEqual([REVOKED]);
    // Kept for the sweep before the write, forgotten once the card showed it.
    expect(refreshes).toEqual(['kept', 'forgotten']);
  });

  it('saves the thread and its audit alone when the step is gone', async () => {
    const { save, withdrawal, writes, cards, audit } = setUp({ stepGone: true });
    await save([withdrawal(REVOKED)]);
    expect(writes).toEqual([{ kind: 'save', audit }]);
    expect(cards).toEqual([]);
  });

  it('saves the thread and its audit alone when no withdrawal has a step decision to write', async () => {
    const { save, withdrawal, writes, refreshes, audit } = setUp();
    await save([withdrawal()]);
    expect(writes).toEqual([{ kind: 'save', audit }]);
    expect(refreshes).toEqual([]);
  });
});
