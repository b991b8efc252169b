import { approverKey } from '../../config/policy-config-schema.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/**
 * Whether `after` raises the stakes over `before`: an edited input that now needs approval, other
 * approvers, more of them, or no longer lets the requester sign. An approval given under `before`
 * then says nothing about `after`, so the edit must not run on it; ask again instead. A different
 * rule with the same approver requirements does not escalate.
 */
export function escalates({ before, after }: { before: PolicyEvaluation; after: PolicyEvaluation }): boolean {
  if (!after.needsApproval) return false;
  if (!before.needsApproval) return true;
  if (!sameApprovers(before, after)) return true;
  if (after.required > before.required) return true;
  return before.allowSelfApproval && !after.allowSelfApproval;
}

function sameApprovers(before: PolicyEvaluation, after: PolicyEvaluation): boolean {
  const beforeKeys = new Set(before.approvers.map(approverKey));
  const afterKeys = new Set(after.approvers.map(approverKey));
  return beforeKeys.size === afterKeys.size && [...afterKeys].every((key) => beforeKeys.has(key));
}
