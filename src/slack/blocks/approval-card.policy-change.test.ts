import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { inputHash, modelVersion } from '../../approvals/input-version.js';
import type { PendingStep } from '../../approvals/pending-step.js';
import { evaluatePolicy } from '../../approvals/policy/evaluate-policy.js';
import { recheckApprovals } from '../../approvals/recheck-approvals.js';
import { resumeToolMessage } from '../../agent/decision-messages.js';
import { applyCallAction } from '../../approvals/transitions/call-action.js';
import { buildApprovalCard } from './approval-card.js';

const evaluationUnder = (yaml: string) => {
  const { policy } = parseConfigFile(yaml, 'test.yml');
  return evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C', input: { service: 'worker', namespace: 'prod' } });
};
const rule = (required: number) => `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0BOB, U0LEAD]
      required: ${required}
`;
const posted = evaluationUnder(rule(1));
const deployed = evaluationUnder(rule(2));
const input = { service: 'worker', namespace: 'prod' };

function waitingStep(): PendingStep {
  return {
    schemaVersion: 2,
    stepId: 's1',
    threadKey: 'T:C:1',
    teamId: 'T',
    channel: 'C',
    threadTs: '1',
    requesterId: 'U0ALICE',
    createdAt: Date.now() - 60_000,
    expiresAt: Date.now() + 60 * 60_000,
    calls: [
      {
        kind: 'approval',
        approvalId: 'a1',
        toolCallId: 'c1',
        toolName: 'restart_service',
        description: '',
        input,
        policy: posted,
        versions: [modelVersion({ input, policy: posted, at: 1 })],
      },
    ],
    decisions: {},
    phase: 'pending',
    revision: 1,
    cardTs: '2',
  };
}

const cardText = (step: PendingStep) => JSON.stringify(buildApprovalCard({ step }).blocks);

describe('the card after a deploy raised the quorum', () => {
  it("Bob's approval is counted 1 of 2, so the card must not say the quorum is met while the call waits", () => {
    const result = applyCallAction(
      waitingStep(),
      { stepId: 's1', approvalId: 'a1', userId: 'U0BOB', origin: { teamId: 'T', channel: 'C', membership: 'member' }, action: { kind: 'approve', version: 0 } },
      { now: Date.now(), groupMembers: new Map(), currentPolicy: deployed, newGrantId: () => 'g1' },
    );
    expect(result.ok && result.effect).toEqual({ kind: 'counted', have: 1, need: 2 });
    const step = result.ok ? result.transition.step : waitingStep();
    const text = cardText(step);
    // The call still waits (Approve buttons are there) for a second approver...
    expect(text).toContain('countersign_approve');
    // ...but the card tells everyone the quorum is complete.
    expect(text).not.toContain('1 of 1 approvals');
    expect(text).toContain('<@U0BOB> or <@U0LEAD> · 2 approvals needed');
    expect(text).toContain('1 of 2 approvals: <@U0BOB>');
    // A grant needs a one-approver rule: the click would be refused, so the card does not offer it.
    expect(text).not.toContain('countersign_grant');
  });

  it('a waiting call with as many approvals as the card asked for (no raised quorum recorded) is not shown as complete', () => {
    const counted: PendingStep = { ...waitingStep(), approvals: { a1: [{ userId: 'U0BOB', at: Date.now(), version: 0, inputHash: inputHash(input) }] } };
    const text = cardText(counted);
    expect(text).not.toContain('1 of 1 approvals');
    expect(text).toContain('1 approval so far, more needed under the approval policy now in force: <@U0BOB>');
  });
});

describe('the card of an approval the resume revoked', () => {
  it('a call Bob approved, revoked at resume because a deploy raised the quorum, is not shown as denied by Bob', async () => {
    const approved: PendingStep = {
      ...waitingStep(),
      phase: 'resumed',
      revision: 2,
      decisions: { a1: { outcome: 'approved', userId: 'U0BOB', at: Date.now(), version: 0, inputHash: inputHash(input), approvedBy: ['U0BOB'] } },
    };
    const { step, revoked } = await recheckApprovals({ step: approved, resolveGroups: async () => new Map(), currentEvaluation: async () => deployed, now: Date.now() });
    expect(revoked).toHaveLength(1);
    const text = cardText(step);
    // Bob approved; nobody denied anything: the call was not run because the policy changed.
    expect(text).not.toContain('Denied by <@U0BOB>');
    expect(text).toContain('Not run: it has fewer approvals than the rule requires under the approval policy now in force');
    // The model is told the same: an error nobody decided, not Bob's refusal.
    const told = JSON.stringify(resumeToolMessage(step));
    expect(told).not.toContain('Declined by');
    expect(told).toContain('nobody declined this call');
  });
});
