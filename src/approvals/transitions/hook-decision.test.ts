import { describe, expect, it } from 'vitest';
import { evaluation, makeStep } from '../pending-step.test-support.js';
import { applyCallAction } from './call-action.js';
import { hookDecisionTransition } from './hook-decision.js';

const NOW = 1_700_000_100_000;
const approve = { decision: 'approve' } as const;

describe('hookDecisionTransition', () => {
  it('approves a call by itself, even one that needs two approvers, as hook:<name>', () => {
    const step = makeStep([{ approvalId: 'a1', policy: evaluation({ required: 2 }) }, 'a2']);
    const transition = hookDecisionTransition(step, { approvalId: 'a1', hookName: 'runbook', verdict: approve, now: NOW })!;
    expect(transition.step.decisions.a1).toMatchObject({ outcome: 'approved', userId: 'hook:runbook', approvedBy: ['hook:runbook'], version: 0 });
    expect(transition.step.phase).toBe('pending');
    expect(transition.completed).toBeUndefined();
    expect(transition.audit).toEqual([expect.objectContaining({ type: 'decision', outcome: 'approved', userId: 'hook:runbook', approvalId: 'a1', version: 0 })]);
    expect(step.decisions).toEqual({});

    const last = hookDecisionTransition(transition.step, { approvalId: 'a2', hookName: 'runbook', verdict: { decision: 'deny', reason: 'freeze' }, now: NOW })!;
    expect(last.step.decisions.a2).toMatchObject({ outcome: 'denied', userId: 'hook:runbook', reason: 'freeze' });
    expect(last).toMatchObject({ completed: true, closed: true, fromRevision: 1, step: { phase: 'complete', revision: 2 } });
  });

  it('never approves under a rule that forbids automatic approval, but may deny there', () => {
    const step = makeStep([{ approvalId: 'a1', policy: evaluation({ autoApprove: 'forbidden' }) }]);
    expect(hookDecisionTransition(step, { approvalId: 'a1', hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
    expect(hookDecisionTransition(step, { approvalId: 'a1', hookName: 'h', verdict: { decision: 'deny', reason: 'no' }, now: NOW })?.step.decisions.a1?.outcome).toBe('denied');
  });

  it('changes nothing on a decided call, a closed step or a question', () => {
    const step = makeStep(['a1', { approvalId: 'q1', kind: 'question' }]);
    const clicked = applyCallAction(step, { stepId: step.stepId, approvalId: 'a1', userId: 'U0BOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'deny' } }, { now: NOW, groupMembers: new Map(), newGrantId: () => 'g' });
    if (!clicked.ok) throw new Error(clicked.refusal.message);
    expect(hookDecisionTransition(clicked.transition.step, { approvalId: 'a1', hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
    expect(hookDecisionTransition(step, { approvalId: 'q1', hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
    expect(hookDecisionTransition({ ...step, phase: 'superseded' }, { approvalId: 'a1', hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
  });
});
