import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { buildPendingStep } from '../../conversation/build-pending-step.js';
import { newThreadState } from '../../store/thread-state.js';
import { CHANNEL, CREATED_AT, TEAM } from '../pending-step.test-support.js';
import { evaluatePolicy } from '../policy/evaluate-policy.js';
import type { PendingStep } from '../pending-step.js';
import type { PolicyConfig } from '../../config/policy-config-schema.js';
import { recheckApprovals } from '../recheck-approvals.js';
import { applyCallAction } from './call-action.js';
import { escalateTransition } from './escalate.js';

/**
 * "Fallback approvers a hop added stay while the config in force keeps the ladder's rule,
 * or a rule with the same ladder and approvers" (README). For a ladder under a named rule, a deploy
 * that takes the fallback off the ladder is seen (the rule's fingerprint changes) and the fallback is
 * refused. A ladder under `policy.defaults` (a tool no rule covers: an MCP tool, say) is matched by
 * what the defaults said, not by `'defaults' === 'defaults'`: else the stored ladder's hops were
 * re-added to the config in force's evaluation and the fallback the deploy removed still approved
 * the waiting call alone.
 */
const HOP_MS = 30 * 60_000;
const input = { service: 'worker' };

function posted(policy: PolicyConfig, toolName: string): Promise<PendingStep> {
  return buildPendingStep({
    thread: newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' }, CREATED_AT),
    requesterId: 'U0ALICE',
    requests: [{ kind: 'approval', approvalId: 'a1', toolCallId: 'call_0', toolName, input }],
    policy,
    definitionOf: () => undefined,
    stepId: 'step1',
    now: CREATED_AT,
  });
}

function leadApproves(step: PendingStep, after: PolicyConfig, toolName: string) {
  const escalated = escalateTransition(step, { now: CREATED_AT + HOP_MS })!.transition.step;
  const currentPolicy = evaluatePolicy({ policy: after, toolName, channel: CHANNEL, input });
  return applyCallAction(
    escalated,
    { stepId: escalated.stepId, approvalId: 'a1', userId: 'U0LEAD', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0 } },
    { now: CREATED_AT + HOP_MS + 60_000, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy },
  );
}

describe('a deploy that takes the fallback approver off the ladder while a card waits, after the hop', () => {
  it('control: under a named rule the fallback is refused', async () => {
    const rule = (ladder: string) => parseConfigFile(`policy:\n  rules:\n    - name: restarts\n      tools: [restart_service]\n      approvers: [U0BOB]\n${ladder}`, 'c.yml').policy;
    const before = rule('      escalation: [{ after: 30m, addApprovers: [U0LEAD] }]\n');
    const after = rule('');
    const result = leadApproves(await posted(before, 'restart_service'), after, 'restart_service');
    expect(result.ok ? 'approved' : result.refusal.code).toBe('not-eligible');
  });

  it('under policy.defaults the fallback the deploy removed is refused too', async () => {
    const defaults = (ladder: string) => parseConfigFile(`policy:\n  defaults:\n    approvers: [U0BOB]\n${ladder}`, 'c.yml').policy;
    const before = defaults('    escalation: [{ after: 30m, addApprovers: [U0LEAD] }]\n');
    const after = defaults('');
    const step = await posted(before, 'github.merge_pull_request');
    expect(step.escalation?.rule).toBe('defaults');
    const result = leadApproves(step, after, 'github.merge_pull_request');
    expect(result.ok ? `approved by ${result.effect.kind === 'decided' ? result.effect.decision.userId : '?'}` : result.refusal.code, 'the fallback the deploy removed approved the call').toBe('not-eligible');
  });

  it('nor does a deploy that hands the fallback to someone else keep the old one', async () => {
    const defaults = (lead: string) => parseConfigFile(`policy:\n  defaults:\n    approvers: [U0BOB]\n    escalation: [{ after: 30m, addApprovers: [${lead}] }]\n`, 'c.yml').policy;
    const result = leadApproves(await posted(defaults('U0LEAD'), 'github.merge_pull_request'), defaults('U0NEWLEAD'), 'github.merge_pull_request');
    expect(result.ok ? 'approved' : result.refusal.code, 'U0LEAD, no longer on the ladder in force, approved the call').toBe('not-eligible');
  });

  it('control: defaults the deploy left as they were, or changed only elsewhere, keep the fallback', async () => {
    const defaults = (reminder: string) => parseConfigFile(`policy:\n  defaults:\n    approvers: [U0BOB]\n${reminder}    escalation: [{ after: 30m, addApprovers: [U0LEAD] }]\n`, 'c.yml').policy;
    for (const after of [defaults(''), defaults('    reminder: 10m\n')]) {
      const result = leadApproves(await posted(defaults(''), 'github.merge_pull_request'), after, 'github.merge_pull_request');
      expect(result.ok ? 'approved' : result.refusal.code).toBe('approved');
    }
  });

  it('a step stored before the ladder recorded its rule is judged by the defaults its call kept', async () => {
    const defaults = (ladder: string) => parseConfigFile(`policy:\n  defaults:\n    approvers: [U0BOB]\n${ladder}`, 'c.yml').policy;
    const ladder = '    escalation: [{ after: 30m, addApprovers: [U0LEAD] }]\n';
    const older = (step: PendingStep): PendingStep => {
      const { rule: _recorded, ...escalation } = step.escalation!;
      return { ...step, escalation };
    };
    const removed = leadApproves(older(await posted(defaults(ladder), 'github.merge_pull_request')), defaults(''), 'github.merge_pull_request');
    expect(removed.ok ? 'approved' : removed.refusal.code).toBe('not-eligible');
    const kept = leadApproves(older(await posted(defaults(ladder), 'github.merge_pull_request')), defaults(ladder), 'github.merge_pull_request');
    expect(kept.ok ? 'approved' : kept.refusal.code).toBe('approved');
  });

  it('at resume, an approval the fallback gave before the deploy no longer holds', async () => {
    const defaults = (ladder: string) => parseConfigFile(`policy:\n  defaults:\n    approvers: [U0BOB]\n${ladder}`, 'c.yml').policy;
    const before = defaults('    escalation: [{ after: 30m, addApprovers: [U0LEAD] }]\n');
    const approved = leadApproves(await posted(before, 'github.merge_pull_request'), before, 'github.merge_pull_request');
    if (!approved.ok) throw new Error(approved.refusal.message);
    const result = await recheckApprovals({
      step: approved.transition.step,
      resolveGroups: async () => new Map(),
      currentEvaluation: async ({ call, input }) => evaluatePolicy({ policy: defaults(''), toolName: call.toolName, channel: CHANNEL, input }),
      now: CREATED_AT + HOP_MS + 120_000,
    });
    expect(result.revoked.map((revocation) => revocation.userId), 'the call ran on the approval of a fallback the deploy removed').toEqual(['U0LEAD']);
  });
});
