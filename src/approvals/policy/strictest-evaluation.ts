import { approverKey, type ApproverSpec, type AutoApprovePermission, type GrantPermission } from '../../config/policy-config-schema.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/**
 * The strictest of the evaluations an unclear input may fall under, given most specific first.
 * `escalates` treats any change of approvers as raising the stakes, both ways, which is right for
 * an edit but orders nothing here; so this compares who may approve by inclusion. Where neither is
 * stricter (other approvers, or a larger quorum against fewer people) the more specific one stays,
 * as it would for a clear input.
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
    approversWithin(left.approvers, right.approvers) &&
    left.required >= right.required &&
    (right.allowSelfApproval || !left.allowSelfApproval) &&
    AUTO_APPROVE_STRICTNESS[left.autoApprove] >= AUTO_APPROVE_STRICTNESS[right.autoApprove] &&
    GRANT_STRICTNESS[left.grants] >= GRANT_STRICTNESS[right.grants]
  );
}

/** Whether everyone `inner` lets approve is also let by `outer`; `channel` lets anyone. */
function approversWithin(inner: readonly ApproverSpec[], outer: readonly ApproverSpec[]): boolean {
  const outerKeys = new Set(outer.map(approverKey));
  if (outerKeys.has('channel')) return true;
  return inner.every((approver) => outerKeys.has(approverKey(approver)));
}

const AUTO_APPROVE_STRICTNESS: Record<AutoApprovePermission, number> = { allowed: 0, forbidden: 1 };
const GRANT_STRICTNESS: Record<GrantPermission, number> = { allowed: 0, identicalArguments: 1, forbidden: 2 };
