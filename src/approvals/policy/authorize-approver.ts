import { approverEligibility, type GroupMembers } from './approver-eligibility.js';
import { whoCanApprove } from './describe-approvers.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

export type ApproverAction = 'approve' | 'deny';

/** Why a click was refused, for the audit trail and for tests; `reason` is what the person reads. */
export type AuthorizationRefusalCode = 'self-approval' | 'groups-unresolved' | 'not-eligible' | 'already-approved';

/** `reason` is shown to the user who clicked (ephemerally), so it says who CAN decide. */
export type Authorization = { allowed: true } | { allowed: false; code: AuthorizationRefusalCode; reason: string };

/**
 * Whether `userId` may approve (or deny) a call, judged at the moment of the click. Deny needs the
 * same standing as approve, so a passer-by cannot veto a change either, with two exceptions that
 * only ever stop a call: the requester (or whoever's answer or deny reason led to the call) may
 * withdraw their own request, and an approver who already approved may change their mind.
 */
export function authorizeApprover({
  evaluation,
  userId,
  requesterId,
  instigatorIds = [],
  groupMembers,
  approvedBy,
  action = 'approve',
  thread,
}: {
  evaluation: PolicyEvaluation;
  userId: string;
  requesterId: string;
  /** People whose answer or deny reason led to this call: judged like the requester (see `approverEligibility`). */
  instigatorIds?: readonly string[];
  groupMembers: GroupMembers;
  /** Users who already approved this call (quorum). */
  approvedBy: readonly string[];
  action?: ApproverAction;
  /** The thread's channel, and whether the click was made there rather than on a copy elsewhere. Default: there. */
  thread?: { channel: string; clickedThere: boolean };
}): Authorization {
  if (action === 'deny' && (userId === requesterId || instigatorIds.includes(userId) || approvedBy.includes(userId))) return { allowed: true };

  const inThreadChannel = thread?.clickedThere ?? true;
  const eligibility = approverEligibility({ evaluation, userId, requesterId, instigatorIds, groupMembers, inThreadChannel });
  if (!eligibility.eligible) {
    if (eligibility.why === 'self-approval') return { allowed: false, code: 'self-approval', reason: 'You asked for this, so someone else must approve it' };
    if (eligibility.why === 'instigator') {
      return { allowed: false, code: 'self-approval', reason: 'You wrote the answer or deny reason that led to this request, and this rule needs someone else to approve it' };
    }
    const [unresolvedGroupId] = eligibility.unresolvedGroupIds;
    if (unresolvedGroupId !== undefined) {
      return { allowed: false, code: 'groups-unresolved', reason: `Could not check who is in <!subteam^${unresolvedGroupId}> just now; try again in a minute` };
    }
    // A copy outside the thread's channel: "anyone in the channel" means the thread's channel.
    if (!inThreadChannel && thread && evaluation.approvers.some((approver) => approver.kind === 'channel')) {
      const named = evaluation.approvers.filter((approver) => approver.kind !== 'channel');
      const others = named.length === 0 ? '' : `, or ${whoCanApprove({ ...evaluation, approvers: named })} from here`;
      return { allowed: false, code: 'not-eligible', reason: `Only people in <#${thread.channel}> can ${action} this, from the thread there${others}` };
    }
    return { allowed: false, code: 'not-eligible', reason: `Only ${whoCanApprove(evaluation)} can ${action} this` };
  }

  if (action === 'approve' && approvedBy.includes(userId)) {
    const remaining = Math.max(1, evaluation.required - new Set(approvedBy).size);
    return { allowed: false, code: 'already-approved', reason: `You already approved this; it needs ${remaining} more approver${remaining === 1 ? '' : 's'}` };
  }
  return { allowed: true };
}
