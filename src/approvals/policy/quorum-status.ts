import { approverEligibility, type GroupMembers } from './approver-eligibility.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

export interface QuorumStatus {
  /** Distinct approvals that still count. */
  approvals: number;
  remaining: number;
  reached: boolean;
}

/**
 * Counts the approvals that still stand: each user once, and only while they are still eligible.
 * Call it again just before running the call, so someone removed from the on-call group between
 * their click and the resume no longer counts.
 */
export function quorumStatus({
  evaluation,
  approvedBy,
  requesterId,
  groupMembers,
}: {
  evaluation: PolicyEvaluation;
  approvedBy: readonly string[];
  requesterId: string;
  groupMembers: GroupMembers;
}): QuorumStatus {
  const approvals = [...new Set(approvedBy)].filter((userId) => approverEligibility({ evaluation, userId, requesterId, groupMembers }).eligible).length;
  const remaining = Math.max(0, evaluation.required - approvals);
  return { approvals, remaining, reached: remaining === 0 };
}
