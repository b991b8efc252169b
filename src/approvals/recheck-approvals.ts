import type { Decision, PendingStep } from './pending-step.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { authorizeApprover } from './policy/authorize-approver.js';

/**
 * Authorization again, at resume: an approver removed from the approving group (or a config that
 * changed who may approve) between the click and the resume must not let the call run. Approvals
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
  for (const call of step.calls) {
    const decision = decisions[call.approvalId];
    if (decision?.outcome !== 'approved' || !call.policy) continue;
    const approvers = [...new Set([...(step.approvals?.[call.approvalId] ?? []).map((approval) => approval.userId), decision.userId])];
    const groupMembers = await options.resolveGroups(approverGroupIds(call.policy));
    for (const userId of approvers) {
      const authorization = authorizeApprover({
        evaluation: call.policy,
        userId,
        requesterId: step.requesterId,
        groupMembers,
        approvedBy: approvers.filter((other) => other !== userId),
      });
      if (authorization.allowed) continue;
      revoked.push({ approvalId: call.approvalId, userId, reason: authorization.reason });
      decisions[call.approvalId] = {
        outcome: 'denied',
        userId,
        at: options.now,
        reason: `the approval by <@${userId}> no longer holds (${authorization.reason.replace(/^You /, 'they ')})`,
      };
      break;
    }
  }
  return { step: revoked.length === 0 ? step : { ...step, decisions }, revoked };
}
