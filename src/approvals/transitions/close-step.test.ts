import { describe, expect, it } from 'vitest';
import { COUNTERSIGN_ACTOR } from '../../agent/decision-messages.js';
import { inputHash } from '../input-version.js';
import type { Decision, PendingStep } from '../pending-step.js';
import { makeStep } from '../pending-step.test-support.js';
import { closeCarriedApprovalsTransition, closeLostThreadTransition, closeStepTransition, rejudgeResumeTransition, supersedeTransition } from './close-step.js';

const INPUT = { service: 'api', namespace: 'staging' };
const HOOK = 'hook:staging-only';
/** A pending step whose first call the hook approved, whose second it denied, and whose third waits for people. */
const step: PendingStep = {
  ...makeStep(['a1', 'a2', 'a3']),
  decisions: {
    a1: { outcome: 'approved', userId: HOOK, at: 1, version: 0, inputHash: inputHash(INPUT), approvedBy: [HOOK] },
    a2: { outcome: 'denied', userId: HOOK, at: 1, reason: 'change freeze' },
  },
};
const cardFailed: Decision = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: 2, reason: 'the approval card could not be posted (invalid_blocks)' };

describe('closeStepTransition (a card that could not be posted)', () => {
  it('closes the approved call unrun as well as the undecided one, saying why and who had approved it; a denial stays', () => {
    const transition = closeStepTransition(step, cardFailed)!;
    expect(transition.step.phase).toBe('superseded');
    expect(transition.step.decisions).toEqual({
      a1: { ...cardFailed, reason: 'the approval card could not be posted (invalid_blocks); it had been approved by the policy hook staging-only, but was closed before it ran' },
      a2: step.decisions.a2,
      a3: cardFailed,
    });
    expect(transition.audit).toEqual([
      expect.objectContaining({ type: 'decision', approvalId: 'a1', outcome: 'denied', userId: COUNTERSIGN_ACTOR, reason: expect.stringContaining('closed before it ran') }),
      expect.objectContaining({ type: 'decision', approvalId: 'a3', outcome: 'denied', userId: COUNTERSIGN_ACTOR, reason: cardFailed.reason }),
    ]);
  });

  it('a newer message still leaves an approval as it was: the model is told the newer message came first', () => {
    const transition = supersedeTransition(step, { userId: 'UALICE', now: 2 })!;
    expect(transition.step.decisions.a1).toEqual(step.decisions.a1);
    expect(transition.audit.map((event) => 'approvalId' in event && event.approvalId)).toEqual(['a3']);
  });
});

describe('rejudgeResumeTransition (an interrupted resume taken over)', () => {
  const fence = { threadKey: step.threadKey, token: '7' };
  const revoked: Decision = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: 3, reason: 'the approval by the policy hook staging-only no longer holds (no approval hook is configured now)' };
  const resumed: PendingStep = { ...step, phase: 'resumed', resumedBy: '3', revision: 4, decisions: { ...step.decisions, a3: { outcome: 'approved', userId: 'U0BOB', at: 2, version: 0, approvedBy: ['U0BOB'] } } };

  it("closes what no longer holds and makes the resume this holder's, under its fence, leaving the other decisions as they were", () => {
    const transition = rejudgeResumeTransition(resumed, { fence, decisions: { a1: revoked } })!;
    expect(transition).toMatchObject({ fromRevision: 4, resumed: true, fence, audit: [] });
    expect(transition.step).toMatchObject({ phase: 'resumed', resumedBy: '7', revision: 5 });
    expect(transition.step.decisions).toEqual({ ...resumed.decisions, a1: revoked });
    expect(resumed.decisions.a1?.outcome).toBe('approved');
  });

  it('is no transition for a step that is not resumed', () => {
    expect(rejudgeResumeTransition({ ...resumed, phase: 'complete' }, { fence, decisions: { a1: revoked } })).toBeUndefined();
  });
});

describe('closeCarriedApprovalsTransition (a newer message instead of Try again)', () => {
  const fence = { threadKey: step.threadKey, token: '9' };
  const resumed: PendingStep = { ...step, phase: 'resumed', resumedBy: '3', revision: 4, decisions: { ...step.decisions, a3: { outcome: 'approved', userId: 'U0BOB', at: 2, version: 0, approvedBy: ['U0BOB'] } } };
  const reason = 'a newer message came instead of Try again';

  it('closes the listed approvals unrun as countersign, saying who had approved them, audited; the others stay', () => {
    const transition = closeCarriedApprovalsTransition(resumed, { fence, approvalIds: ['a2', 'a3'], reason, now: 5 })!;
    expect(transition).toMatchObject({ fromRevision: 4, resumed: true, fence });
    expect(transition.step.decisions).toEqual({
      ...resumed.decisions,
      a3: { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: 5, reason: `${reason}; it had been approved by <@U0BOB>, but was closed before it ran` },
    });
    expect(transition.audit).toEqual([expect.objectContaining({ type: 'decision', approvalId: 'a3', outcome: 'denied', userId: COUNTERSIGN_ACTOR, reason: expect.stringContaining('closed before it ran') })]);
  });

  it('is no transition when none of them is still approved, or the step is not resumed', () => {
    expect(closeCarriedApprovalsTransition(resumed, { fence, approvalIds: ['a2'], reason, now: 5 })).toBeUndefined();
    expect(closeCarriedApprovalsTransition({ ...resumed, phase: 'complete' }, { fence, approvalIds: ['a3'], reason, now: 5 })).toBeUndefined();
  });
});

describe('closeLostThreadTransition (a decided step whose thread Redis evicted or flushed)', () => {
  const fence = { threadKey: step.threadKey, token: '9' };
  const lost: Decision = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: 4, reason: "the thread's saved state was lost (Redis evicted or flushed it), so the turn could not go on" };
  const decided: PendingStep = {
    ...step,
    phase: 'complete',
    revision: 5,
    decisions: { ...step.decisions, a3: { outcome: 'approved', userId: 'U0BOB', at: 2, version: 0, approvedBy: ['U0BOB'] } },
  };

  it("claims the resume under the holder's fence and closes every approved call unrun, saying why and who had approved it; a denial stays", () => {
    const transition = closeLostThreadTransition(decided, { fence, decision: lost })!;
    expect(transition).toMatchObject({ fromRevision: 5, resumed: true, fence });
    expect(transition.step).toMatchObject({ phase: 'resumed', resumedBy: '9', revision: 6 });
    expect(transition.step.decisions).toEqual({
      a1: { ...lost, reason: `${lost.reason}; it had been approved by the policy hook staging-only, but was closed before it ran` },
      a2: decided.decisions.a2,
      a3: { ...lost, reason: `${lost.reason}; it had been approved by <@U0BOB>, but was closed before it ran` },
    });
    expect(transition.audit).toEqual([
      expect.objectContaining({ type: 'decision', approvalId: 'a1', outcome: 'denied', userId: COUNTERSIGN_ACTOR }),
      expect.objectContaining({ type: 'decision', approvalId: 'a3', outcome: 'denied', userId: COUNTERSIGN_ACTOR }),
    ]);
  });

  it('is no transition for a step still pending or already resumed', () => {
    expect(closeLostThreadTransition(step, { fence, decision: lost })).toBeUndefined();
    expect(closeLostThreadTransition({ ...decided, phase: 'resumed', resumedBy: '3' }, { fence, decision: lost })).toBeUndefined();
  });
});
