import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { evaluatePolicy, type PolicyEvaluation } from '../policy/evaluate-policy.js';
import { governingPolicy } from '../policy/governing-policy.js';
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

describe('an edit on a replica whose config says other of the card than the card does', () => {
  // The card was posted under a rule for Bob and the lead; this replica's config gives prod restarts
  // to the lead and Carol, and keeps them from grants. Neither names only people the other does, so
  // the card's rule stays for the edited version, whole: the config in force governs it beside the
  // card's at every click (`governingPolicy`), not through the stored version.
  const card = underRule('      approvers: [UBOB, U0LEAD]\n');
  const inForce = underRule('      approvers: [U0LEAD, UCAROL]\n      grants: forbidden\n      expiry: 2h\n');

  it("stores the edited version with the card's policy, which governs together with the config in force", () => {
    const step = makeStep([{ approvalId: 'a1', input, policy: card }]);
    const edited = { service: 'worker', namespace: 'prod', replicas: 2 };
    const result = applyCallAction(step, click(step, 'U0LEAD', { kind: 'edit', fromVersion: 0, input: edited, submittedInput: edited, policy: inForce }), {
      now: NOW,
      groupMembers: new Map(),
      newGrantId: () => 'g1',
      currentPolicy: inForce,
    });
    if (!result.ok) throw new Error(result.refusal.message);
    const version = result.transition.step.calls[0]!.versions!.at(-1)!;
    expect(version.policy).toEqual(card);
    expect(governingPolicy({ step: result.transition.step, stored: version.policy, current: inForce }).current).toMatchObject({ grants: 'forbidden', expiryMs: 2 * 3_600_000 });
  });
});

describe("an edit back to an input under an unchanged rule, after an edit under a rule a deploy changed", () => {
  // prod and staging restarts: anyone but the requester, one approval. A deploy raised prod's quorum
  // to 2, then shortened staging's expiry. Alice's staging restart was posted before the second.
  const config = (prod: string, staging: string) =>
    parseConfigFile(
      `policy:\n  rules:\n    - name: prod\n      tools: [restart_service]\n      input: [{ field: namespace, equals: prod }]\n${prod}    - name: other\n      tools: [restart_service]\n      autoApprove: forbidden\n${staging}`,
      'countersign.yml',
    ).policy;
  const posted = config('      required: 2\n', '      expiry: 10m\n');
  const now = config('      required: 2\n', '      expiry: 5m\n');
  const staging = { service: 'worker', namespace: 'staging' };
  const prod = { service: 'api', namespace: 'prod' };
  const evaluate = (policy: typeof now, of: unknown) => evaluatePolicy({ policy, toolName: 'restart_service', channel: CHANNEL, input: of });

  it("takes no quorum from the version it replaces: Carol's edit back to staging is her approval, and staging needs one", () => {
    let step = makeStep([{ approvalId: 'a1', input: staging, policy: evaluate(posted, staging) }]);
    const edit = (from: number, to: unknown, at: number) => {
      const result = applyCallAction(step, click(step, 'UCAROL', { kind: 'edit', fromVersion: from, input: to, submittedInput: to, policy: evaluate(now, to) }), {
        now: at,
        groupMembers: new Map(),
        newGrantId: () => 'g1',
        currentPolicy: evaluate(now, currentInput(step)),
      });
      if (!result.ok) throw new Error(result.refusal.message);
      step = result.transition.step;
      return result.effect;
    };
    expect(edit(0, prod, NOW)).toMatchObject({ kind: 'new-version', counted: true, have: 1, need: 2 });
    expect(step.calls[0]!.versions![2 - 1]!.policy.required).toBe(1);
    expect(edit(1, staging, NOW + 1)).toMatchObject({ kind: 'decided', decision: { outcome: 'approved', userId: 'UCAROL', version: 2 } });
  });
});

function currentInput(step: PendingStep): unknown {
  return step.calls[0]!.versions!.at(-1)!.input;
}
