import { hookNameOf } from './approval-hook.js';
import { approvedVersion } from './input-version.js';
import { decisionOf, type Decision, type PendingStep } from './pending-step.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { authorizeApprover } from './policy/authorize-approver.js';

/**
 * Authorization again, at resume: an approver removed from the approving group (or a record that
 * does not hold together) between the click and the resume must not let the call run. Approvals
 * that no longer hold become denials that say why; everything else is returned unchanged.
 */
export async function recheckApprovals(options: {
  step: PendingStep;
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  now: number;
}): Promise<{ step: PendingStep; revoked: Array<{ approvalId: string; userId: string; reason: string }> }> {
  const { step } = options;
  const decisions: Record<string, Decision> = { ...step.decisions };
  const revoked: Array<{ approvalId: string; userId: string; reason: string }> = [];
  const revoke = (approvalId: string, userId: string, reason: string, text: string) => {
    revoked.push({ approvalId, userId, reason });
    decisions[approvalId] = { outcome: 'denied', userId, at: options.now, reason: text };
  };
  for (const call of step.calls) {
    const decision = decisionOf(step, call.approvalId);
    if (decision?.outcome !== 'approved') continue;
    const version = approvedVersion(step, call);
    if (!version) {
      revoke(call.approvalId, decision.userId, 'the approval does not match any version of the input', 'the approval on record does not match the input, so it was not run');
      continue;
    }
    // The approval hook's decision settles the call by itself (see `hookDecisionTransition`): no quorum or group to re-check.
    if (hookNameOf(decision.userId) !== undefined) continue;
    const approvers = [...new Set(decision.approvedBy ?? [])];
    if (approvers.length < version.policy.required) {
      revoke(call.approvalId, decision.userId, 'fewer approvals than the rule requires', 'it has fewer approvals than the rule requires, so it was not run');
      continue;
    }
    const groupMembers = await options.resolveGroups(approverGroupIds(version.policy));
    for (const userId of approvers) {
      const authorization = authorizeApprover({ evaluation: version.policy, userId, requesterId: step.requesterId, groupMembers, approvedBy: [] });
      if (authorization.allowed) continue;
      revoke(call.approvalId, userId, authorization.reason, `the approval by <@${userId}> no longer holds (${authorization.reason.replace(/^You /, 'they ')})`);
      break;
    }
  }
  return { step: revoked.length === 0 ? step : { ...step, decisions }, revoked };
}
