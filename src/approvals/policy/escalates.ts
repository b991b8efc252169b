import { approverKey, type ApproverSpec } from '../../config/policy-config-schema.js';
import { approverLists } from './approver-eligibility.js';
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

/** The same approvers, and the same other rules' approvers for an input that may fall under several (`alsoApprovers`). */
function sameApprovers(before: PolicyEvaluation, after: PolicyEvaluation): boolean {
  const beforeLists = approverLists(before).map(keysOf);
  const afterLists = approverLists(after).map(keysOf);
  return beforeLists.length === afterLists.length && beforeLists.every((keys, index) => sameKeys(keys, afterLists[index]!));
}

const keysOf = (list: readonly ApproverSpec[]) => new Set(list.map(approverKey));
const sameKeys = (left: ReadonlySet<string>, right: ReadonlySet<string>) => left.size === right.size && [...right].every((key) => left.has(key));
