import { approverKey, type ApproverSpec, type AutoApprovePermission, type GrantPermission } from '../../config/policy-config-schema.js';
import { approverLists } from './approver-eligibility.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/**
 * The strictest of `evaluations`, whole, given the one to keep on a tie first: of the rules an
 * unclear input may fall under (most specific first; `evaluatePolicy` then holds it to every other
 * one too, `underEveryRule`), or of a card's policy and the config in force's for an edited input
 * (`editedPolicy`). `escalates` treats any change of approvers as raising the stakes, both ways,
 * which is right for an edit but orders nothing here; so this compares who may approve by
 * inclusion, counting those a ladder's hops would add: a rule whose ladder hands its calls to
 * developers after 15 minutes lets more people approve than one for SRE alone, though both name SRE.
 * Where neither is stricter (other approvers, or a larger quorum against fewer people) the first
 * one stays, as the more specific rule would for a clear input.
 */
export function strictestEvaluation(evaluations: readonly [PolicyEvaluation, ...PolicyEvaluation[]]): PolicyEvaluation {
  let strictest = evaluations[0];
  for (const candidate of evaluations.slice(1)) {
    if (isStricter(candidate, strictest)) strictest = candidate;
  }
  return strictest;
}

export function isStricter(candidate: PolicyEvaluation, current: PolicyEvaluation): boolean {
  return atLeastAsStrict(candidate, current) && !atLeastAsStrict(current, candidate);
}

function atLeastAsStrict(left: PolicyEvaluation, right: PolicyEvaluation): boolean {
  if (!right.needsApproval) return true;
  if (!left.needsApproval) return false;
  return (
    onlyApproversOf(left, right) &&
    left.required >= right.required &&
    (right.allowSelfApproval || !left.allowSelfApproval) &&
    AUTO_APPROVE_STRICTNESS[left.autoApprove] >= AUTO_APPROVE_STRICTNESS[right.autoApprove] &&
    GRANT_STRICTNESS[left.grants] >= GRANT_STRICTNESS[right.grants]
  );
}

/**
 * Whether everyone `inner` lets approve, now or after every hop of its ladder, `outer` lets approve
 * now: is among its approvers and each of its `alsoApprovers`.
 */
function onlyApproversOf(inner: PolicyEvaluation, outer: Pick<PolicyEvaluation, 'approvers' | 'alsoApprovers'>): boolean {
  const everyoneInner = mayComeToApprove(inner);
  return approverLists(outer).every((list) => approversWithin(everyoneInner, list));
}

/** The approvers of `evaluation` and those every hop of its ladder would add. */
function mayComeToApprove(evaluation: PolicyEvaluation): ApproverSpec[] {
  return [...evaluation.approvers, ...(evaluation.escalation ?? []).flatMap((stage) => stage.addApprovers)];
}

/** Whether everyone `inner` lets approve is also let by `outer`; `channel` lets anyone. */
function approversWithin(inner: readonly ApproverSpec[], outer: readonly ApproverSpec[]): boolean {
  const outerKeys = new Set(outer.map(approverKey));
  if (outerKeys.has('channel')) return true;
  return inner.every((approver) => outerKeys.has(approverKey(approver)));
}

const AUTO_APPROVE_STRICTNESS: Record<AutoApprovePermission, number> = { allowed: 0, forbidden: 1 };
export const GRANT_STRICTNESS: Record<GrantPermission, number> = { allowed: 0, identicalArguments: 1, forbidden: 2 };
