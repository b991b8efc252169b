import type { PendingStep } from '../pending-step.js';
import { combinesRules, type GroupMembers } from './approver-eligibility.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { quorumReachable, type LadderProgress } from './quorum-reachable.js';

/** Why a call whose input may fall under rules nobody can satisfy at once was closed: on the card, and to the model as an error. */
export const UNAPPROVABLE_INPUT_TEXT =
  'nobody can approve this input as it is: it may fall under more than one approval rule, and too few people are approvers under every one of them; ask for it again as separate calls, each with an input that falls under one rule';

/**
 * Whether a version's policy, on its own, combines rules (`alsoApprovers`) whose approvers have too
 * few people in common to reach its quorum, even after the ladder's hops still to come: SRE's rule
 * and the dev lead's, for a list with dev and prod. Only what can be told from `groupMembers`: a
 * group not read leaves it open (`quorumReachable` closes nothing on a doubt), and the click, which
 * reads the groups, asks again.
 */
export function unapprovableInput({
  step,
  policy,
  groupMembers,
}: {
  step: LadderProgress & Pick<PendingStep, 'requesterId' | 'instigatorIds'>;
  policy: PolicyEvaluation;
  groupMembers: GroupMembers;
}): boolean {
  if (!policy.needsApproval || !combinesRules(policy)) return false;
  return !quorumReachable({ step, stored: policy, current: undefined, requesterId: step.requesterId, ...(step.instigatorIds ? { instigatorIds: step.instigatorIds } : {}), groupMembers });
}
