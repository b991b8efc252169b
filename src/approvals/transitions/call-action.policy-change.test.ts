import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { evaluatePolicy, type PolicyEvaluation } from '../policy/evaluate-policy.js';
import { applyCallAction, type CallActionRequest } from './call-action.js';
import { recheckApprovals } from '../recheck-approvals.js';
import { makeStep, CHANNEL, TEAM } from '../pending-step.test-support.js';
import type { PendingStep } from '../pending-step.js';
import { COUNTERSIGN_ACTOR } from '../../agent/decision-messages.js';

/** A prod restart evaluated under a config whose only rule has these settings (as a deploy would load it). */
function underRule(settings: string): PolicyEvaluation {
  const { policy } = parseConfigFile(`policy:\n  rules:\n    - name: prod restarts\n      tools: [restart_service]\n${settings}`, 'countersign.yml');
  return evaluatePolicy({ policy, toolName: 'restart_service', channel: CHANNEL, input: { service: 'worker', namespace: 'prod' } });
}

const input = { service: 'worker', namespace: 'prod' };
const click = (step: PendingStep, userId: string, action: CallActionRequest['action']): CallActionRequest => ({
  stepId: step.stepId,
  approvalId: 'a1',
  userId,
  origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' },
  action,
});
const NOW = 1_700_000_060_000;

describe('a deploy that replaces the approvers of a waiting card', () => {
  // The card was posted when Bob was on call; the deploy hands prod restarts to the lead.
  const card = underRule('      approvers: [UBOB]\n');
  const inForce = underRule('      approvers: [U0LEAD]\n');

  it('someone can still decide the waiting call (approve or deny): otherwise it hangs until it expires', () => {
    const step = makeStep([{ approvalId: 'a1', input, policy: card }]);
    const context = { now: NOW, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce };
    const outcomes = ['UBOB', 'U0LEAD'].flatMap((userId) =>
      (['approve', 'deny'] as const).map((kind) => {
        const result = applyCallAction(step, click(step, userId, kind === 'approve' ? { kind, version: 0 } : { kind }), context);
        return { userId, kind, ok: result.ok, message: result.ok ? undefined : result.refusal.message };
      }),
    );
    // Before the fix every one of them was refused; Bob was told only the lead may, the lead only Bob may.
    expect(outcomes.some((outcome) => outcome.ok), JSON.stringify(outcomes, null, 1)).toBe(true);
  });

  it("either of them may deny: Bob's deny is his", () => {
    const step = makeStep([{ approvalId: 'a1', input, policy: card }]);
    const result = applyCallAction(step, click(step, 'UBOB', { kind: 'deny' }), { now: NOW, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce });
    expect(result.ok && result.effect).toMatchObject({ kind: 'decided', decision: { outcome: 'denied', userId: 'UBOB' } });
  });

  it("the lead's approve closes the call as countersign's error that says why, on the record, instead of leaving a card nobody can approve", () => {
    const step = makeStep([{ approvalId: 'a1', input, policy: card }]);
    const result = applyCallAction(step, click(step, 'U0LEAD', { kind: 'approve', version: 0 }), { now: NOW, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce });
    if (!result.ok) throw new Error(result.refusal.message);
    const reason = 'the approval policy changed since this card was posted and nobody it names can approve this request now; ask again';
    expect(result.effect).toEqual({ kind: 'decided', decision: { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: NOW, reason } });
    expect(result.transition.completed).toBe(true);
    expect(result.transition.audit).toEqual([expect.objectContaining({ type: 'decision', outcome: 'denied', userId: COUNTERSIGN_ACTOR, reason })]);
  });

  it('so does any click when a raised quorum exceeds the people both policies name', () => {
    const step = makeStep([{ approvalId: 'a1', input, policy: underRule('      approvers: [UBOB, U0LEAD]\n') }]);
    const raised = underRule('      approvers: [U0LEAD, U0CAROL]\n      required: 2\n');
    const result = applyCallAction(step, click(step, 'U0PASSERBY', { kind: 'deny' }), { now: NOW, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: raised });
    expect(result.ok && result.effect).toMatchObject({ kind: 'decided', decision: { outcome: 'denied', userId: COUNTERSIGN_ACTOR } });
  });

  it('a card someone can still approve is not closed: the lead named by both approves as ever', () => {
    const step = makeStep([{ approvalId: 'a1', input, policy: underRule('      approvers: [UBOB, U0LEAD]\n') }]);
    const result = applyCallAction(step, click(step, 'U0LEAD', { kind: 'approve', version: 0 }), { now: NOW, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce });
    expect(result.ok && result.effect).toMatchObject({ kind: 'decided', decision: { outcome: 'approved', userId: 'U0LEAD' } });
  });
});

describe('approvals given before a deploy still count towards the quorum at the click', () => {
  // Two of Bob, Lead1, Lead2 when the card was posted; the deploy takes Bob off the rule.
  const card = underRule('      approvers: [UBOB, U0LEAD1, U0LEAD2]\n      required: 2\n');
  const inForce = underRule('      approvers: [U0LEAD1, U0LEAD2]\n      required: 2\n');

  it("Lead1's approval after the deploy is 1 of 2 (Bob's no longer holds), so Lead2 can still approve and the call runs", async () => {
    let step = makeStep([{ approvalId: 'a1', input, policy: card }]);
    // Bob approves before the deploy (no config change yet: 1 of 2).
    const before = applyCallAction(step, click(step, 'UBOB', { kind: 'approve', version: 0 }), { now: NOW, groupMembers: new Map(), newGrantId: () => 'g' });
    expect(before.ok && before.effect.kind).toBe('counted');
    step = (before as Extract<typeof before, { ok: true }>).transition.step;

    // After the deploy Lead1 approves on a replica with the new config.
    const after = applyCallAction(step, click(step, 'U0LEAD1', { kind: 'approve', version: 0 }), { now: NOW + 1, groupMembers: new Map(), newGrantId: () => 'g', currentPolicy: inForce });
    expect(after.ok).toBe(true);
    const { transition, effect } = after as Extract<typeof after, { ok: true }>;

    // What the resume will make of it, if the click decided the call.
    if (effect.kind === 'decided') {
      const resumed = await recheckApprovals({ step: { ...transition.step, phase: 'resumed' }, resolveGroups: async () => new Map(), currentEvaluation: async () => inForce, now: NOW + 2 });
      // The call the click reported approved ("Approved by Lead1") is denied at resume and never runs,
      // and Lead2 never gets the chance to give the second approval the policy in force asks for.
      expect({ clickSaid: effect.kind, resumeSaid: resumed.step.decisions.a1?.outcome, revoked: resumed.revoked }).toEqual({ clickSaid: 'counted', resumeSaid: 'approved', revoked: [] });
    }
    expect(effect).toMatchObject({ kind: 'counted', have: 1, need: 2 });
    // The card counts what is on the step: "1 of 2 approvals: Lead1"; Bob's lapsed approval is on the record.
    expect(transition.step.approvals?.a1?.map((approval) => approval.userId)).toEqual(['U0LEAD1']);
    expect(transition.audit).toContainEqual(expect.objectContaining({ type: 'action-refused', userId: 'UBOB', action: 'approve', code: 'approval-revoked' }));

    // Lead2 gives the second approval; the resume agrees and the call runs.
    const last = applyCallAction(transition.step, click(transition.step, 'U0LEAD2', { kind: 'approve', version: 0 }), { now: NOW + 2, groupMembers: new Map(), newGrantId: () => 'g', currentPolicy: inForce });
    if (!last.ok) throw new Error(last.refusal.message);
    expect(last.effect).toMatchObject({ kind: 'decided', decision: { outcome: 'approved', approvedBy: ['U0LEAD1', 'U0LEAD2'] } });
    const resumed = await recheckApprovals({ step: { ...last.transition.step, phase: 'resumed' }, resolveGroups: async () => new Map(), currentEvaluation: async () => inForce, now: NOW + 3 });
    expect(resumed.revoked).toEqual([]);
  });
});
