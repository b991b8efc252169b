import type { ApproverSpec } from '../../config/policy-config-schema.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/** Members of each Slack user group, keyed by usergroup id (`S…`), as `usergroups.users.list` returns them. */
export type GroupMembers = ReadonlyMap<string, ReadonlySet<string>>;

export type Eligibility =
  | { eligible: true }
  | { eligible: false; why: 'self-approval' }
  /** The person's answer or deny reason led to this call (see `PendingStep.instigatorIds`). */
  | { eligible: false; why: 'instigator' }
  | { eligible: false; why: 'not-an-approver'; unresolvedGroupIds: string[] };

/**
 * Whether `userId` may countersign under `evaluation`, ignoring who already did. A group whose
 * members the caller could not resolve counts as empty: an outage at Slack must not open the gate.
 */
export function approverEligibility({
  evaluation,
  userId,
  requesterId,
  instigatorIds = [],
  groupMembers,
  inThreadChannel = true,
}: {
  evaluation: PolicyEvaluation;
  userId: string;
  requesterId: string;
  /**
   * People who steered the turn to this call by answering the model's questions. A self-approval
   * ban excludes them as it does the requester: in a scheduled turn the requester is the schedule,
   * and an answer is how a person asks for something there.
   */
  instigatorIds?: readonly string[];
  groupMembers: GroupMembers;
  /**
   * Whether the person acted in the thread's channel. `channel` means the people of the thread's
   * channel: a click on a copy elsewhere (#approvals, a DM) proves nothing about them.
   */
  inThreadChannel?: boolean;
}): Eligibility {
  if (userId === requesterId && !evaluation.allowSelfApproval) return { eligible: false, why: 'self-approval' };
  if (instigatorIds.includes(userId) && !evaluation.allowSelfApproval) return { eligible: false, why: 'instigator' };
  const covered = (list: readonly ApproverSpec[], clickedInChannel: boolean) =>
    list.some((approver) => isCoveredBy({ approver, userId, requesterId, groupMembers, inThreadChannel: clickedInChannel }));
  // Another rule's `channel` holds nobody back that `approvers` names, wherever they click: a named
  // approver is stricter than anyone in the channel (`strictestEvaluation`), as for a clear input.
  if (covered(evaluation.approvers, inThreadChannel) && (evaluation.alsoApprovers ?? []).every((list) => covered(list, true))) return { eligible: true };
  const unresolvedGroupIds = approverGroupIds(evaluation).filter((groupId) => !groupMembers.has(groupId));
  return { eligible: false, why: 'not-an-approver', unresolvedGroupIds };
}

/**
 * The lists a person must be in, each, to approve under `evaluation`: its approvers, and for an input
 * that may fall under several rules those of the others (`alsoApprovers`).
 */
export function approverLists(evaluation: Pick<PolicyEvaluation, 'approvers' | 'alsoApprovers'>): ApproverSpec[][] {
  return [evaluation.approvers, ...(evaluation.alsoApprovers ?? [])];
}

/** Whether `evaluation` holds its approvers to other rules' too (`alsoApprovers`): an input that may fall under several. */
export function combinesRules(evaluation: Pick<PolicyEvaluation, 'alsoApprovers'>): boolean {
  return (evaluation.alsoApprovers?.length ?? 0) > 0;
}

/** The user groups whose members the caller must resolve (and cache) before authorizing a click. */
export function approverGroupIds(evaluation: Pick<PolicyEvaluation, 'approvers' | 'alsoApprovers'>): string[] {
  return [...new Set(approverLists(evaluation).flatMap((list) => list.flatMap((approver) => (approver.kind === 'group' ? [approver.groupId] : []))))];
}

/**
 * Whether a person may approve under `evaluation` by being in the thread's channel (the `channel`
 * approver): a check away from the card (a grant used later) must then ask whether they still are.
 */
export function reliesOnChannelMembership(evaluation: Pick<PolicyEvaluation, 'approvers'>): boolean {
  return evaluation.approvers.some((approver) => approver.kind === 'channel');
}

function isCoveredBy({
  approver,
  userId,
  requesterId,
  groupMembers,
  inThreadChannel,
}: {
  approver: ApproverSpec;
  userId: string;
  requesterId: string;
  groupMembers: GroupMembers;
  inThreadChannel: boolean;
}): boolean {
  switch (approver.kind) {
    case 'user':
      return approver.userId === userId;
    case 'group':
      return groupMembers.get(approver.groupId)?.has(userId) ?? false;
    case 'requester':
      return userId === requesterId;
    case 'channel':
      // Slack only delivers a click from someone who can see the card, i.e. who is in the channel;
      // a copy elsewhere is seen by other people, so it widens nothing.
      return inThreadChannel;
  }
}
