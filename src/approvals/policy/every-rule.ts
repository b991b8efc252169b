import { approverKey, type ApproverSpec, type GrantPermission } from '../../config/policy-config-schema.js';
import { approverLists } from './approver-eligibility.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { combinedFingerprint } from './rule-fingerprint.js';
import { GRANT_STRICTNESS } from './strictest-evaluation.js';

/** What an input that may fall under several rules takes from every one of them. */
export type RuleCombination = Pick<PolicyEvaluation, 'autoApprove' | 'grants' | 'allowSelfApproval' | 'required' | 'expiryMs' | 'reminderMs' | 'alsoApprovers'>;

/**
 * `chosen` (the strictest of the candidates, `strictestEvaluation`, else the most specific) held to
 * every candidate that asks for approval: an input that may fall under several rules needs a
 * countersignature each of them would accept. Taking one rule whole let a more specific `input:`
 * rule decide alone: a list with dev and prod went to the dev lead, run unasked by its `autoApprove`,
 * granted ahead of time, or handed to developers by its ladder, though the rule for prod allows none
 * of it. So whoever approves must be an approver under each rule (`alsoApprovers`, checked wherever
 * eligibility is: the click, the resume, grants, App Home, reminders), the quorum is the largest,
 * the expiry the shortest (with a reminder that still comes before it), and automatic approval,
 * grants and self-approval are forbidden where any of them forbids them. The rest (`onExpiry`,
 * `notify`, the ladder) is the chosen one's and holds nothing back; a hop adds to `approvers` only,
 * so it never widens past another rule. Where the rules name nobody in common, or fewer people than
 * the quorum, nobody can approve the input as it is: `quorumReachable` says so, and the call is
 * closed with that reason (`unapprovableInput`: when its card is built, else at the first click)
 * rather than left waiting.
 *
 * Where anything was added, the evaluation is no longer its rule's alone, so the rule's fingerprint
 * is combined with what was (`combinedFingerprint`): a deploy that changes what another rule adds is
 * then seen as a change (`unchangedSince`), and a grant given under the rule alone does not cover
 * the combination. Pure.
 */
export function underEveryRule({ chosen, candidates }: { chosen: PolicyEvaluation; candidates: readonly PolicyEvaluation[] }): PolicyEvaluation {
  if (!chosen.needsApproval) return chosen;
  const asking = [chosen, ...candidates.filter((candidate) => candidate.needsApproval)];
  const expiryFrom = asking.reduce((shortest, candidate) => (candidate.expiryMs < shortest.expiryMs ? candidate : shortest));
  const reminderMs = [chosen.reminderMs, expiryFrom.reminderMs].find((reminder) => reminder !== undefined && reminder < expiryFrom.expiryMs);
  const alsoApprovers = otherApprovers({ chosen, asking });
  const combination: RuleCombination = {
    autoApprove: asking.some((candidate) => candidate.autoApprove === 'forbidden') ? 'forbidden' : chosen.autoApprove,
    grants: asking.reduce<GrantPermission>((strictest, { grants }) => (GRANT_STRICTNESS[grants] > GRANT_STRICTNESS[strictest] ? grants : strictest), chosen.grants),
    allowSelfApproval: asking.every((candidate) => candidate.allowSelfApproval),
    required: Math.max(...asking.map((candidate) => candidate.required)),
    expiryMs: expiryFrom.expiryMs,
    ...(reminderMs === undefined ? {} : { reminderMs }),
    ...(alsoApprovers.length === 0 ? {} : { alsoApprovers }),
  };
  if (sameCombination(combination, chosen)) return chosen;
  const { reminderMs: _ownReminder, alsoApprovers: _ownOthers, rule, ...rest } = chosen;
  return { ...rest, ...combination, rule: rule?.fingerprint === undefined ? rule : { ...rule, fingerprint: combinedFingerprint({ fingerprint: rule.fingerprint, combination }) } };
}

/**
 * The approver lists of the other candidates (and any the chosen one already carries), each once, in
 * an order the config's does not change (so neither does the fingerprint). Every one of them, even
 * one that names everyone the chosen one does: the rule is no less one the input may fall under, its
 * self-approval ban or quorum may leave nobody to approve, and the ladder's hops may come to name
 * someone it does not. The chosen one's own list is not among them: its ladder may widen it, up to
 * the others.
 */
function otherApprovers({ chosen, asking }: { chosen: PolicyEvaluation; asking: readonly PolicyEvaluation[] }): ApproverSpec[][] {
  const lists = new Map<string, ApproverSpec[]>();
  const add = (list: readonly ApproverSpec[]) => lists.set(listKey(list), [...list].sort(byKey).map((approver) => ({ ...approver })));
  for (const list of chosen.alsoApprovers ?? []) add(list);
  for (const candidate of asking) {
    if (candidate !== chosen) for (const list of approverLists(candidate)) add(list);
  }
  return [...lists.entries()].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)).map(([, list]) => list);
}

const byKey = (left: ApproverSpec, right: ApproverSpec) => (approverKey(left) < approverKey(right) ? -1 : approverKey(left) > approverKey(right) ? 1 : 0);

function listKey(list: readonly ApproverSpec[]): string {
  return JSON.stringify([...new Set(list.map(approverKey))].sort());
}

function sameCombination(combination: RuleCombination, evaluation: PolicyEvaluation): boolean {
  return (
    combination.autoApprove === evaluation.autoApprove &&
    combination.grants === evaluation.grants &&
    combination.allowSelfApproval === evaluation.allowSelfApproval &&
    combination.required === evaluation.required &&
    combination.expiryMs === evaluation.expiryMs &&
    combination.reminderMs === evaluation.reminderMs &&
    combination.alsoApprovers === undefined
  );
}
