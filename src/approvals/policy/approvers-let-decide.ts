import { approverKey, type ApproverSpec } from '../../config/policy-config-schema.js';
import { currentVersion } from '../input-version.js';
import type { PendingCall, PendingStep } from '../pending-step.js';
import { approverLists } from './approver-eligibility.js';
import { type CurrentEvaluation, governingPolicy } from './governing-policy.js';

/**
 * Of `approvers` (named on the card's policy of `calls`), those a click would be accepted from on
 * some of `calls` once the config in force governs too: after a deploy that changed their rule,
 * someone the card names but the config in force does not is refused, so nobody sends them to the
 * card ("<@U0LEAD> can now approve") nor gives them its input (a DM copy); nor, for an input that
 * may fall under several rules, someone the other rules' approvers do not name too. Named in every
 * such list counts (groups are not read here, so a user named only through a group is left out).
 * Without `currentEvaluation` only the card's own lists govern.
 */
export async function approversLetDecide<Approver extends ApproverSpec>({
  step,
  calls,
  approvers,
  currentEvaluation,
}: {
  step: PendingStep;
  calls: readonly PendingCall[];
  approvers: readonly Approver[];
  currentEvaluation: CurrentEvaluation | undefined;
}): Promise<Approver[]> {
  if (approvers.length === 0) return [...approvers];
  const names = (list: readonly ApproverSpec[], approver: ApproverSpec) => list.some((named) => named.kind === 'channel' || approverKey(named) === approverKey(approver));
  const accepted = new Set<string>();
  for (const call of calls) {
    const version = currentVersion(call);
    if (!version) continue;
    const current = currentEvaluation ? await currentEvaluation({ step, call, input: version.input }) : undefined;
    const governing = governingPolicy({ step, stored: version.policy, current });
    // The other rules an unclear input may fall under must name them too (`alsoApprovers`), as must the config in force.
    const lists = [...(governing.stored.alsoApprovers ?? []), ...(governing.current ? approverLists(governing.current) : [])];
    for (const approver of approvers) if (lists.every((list) => names(list, approver))) accepted.add(approverKey(approver));
  }
  return approvers.filter((approver) => accepted.has(approverKey(approver)));
}
