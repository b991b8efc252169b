import type { AutoApprovePermission, GrantPermission } from '../../config/policy-config-schema.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { tightenedFingerprint } from './rule-fingerprint.js';

/** The settings that only ever hold a call back, each of which can be taken from any rule alone. */
export type PolicyLimits = Pick<PolicyEvaluation, 'autoApprove' | 'grants' | 'allowSelfApproval' | 'required' | 'expiryMs' | 'reminderMs'>;

/**
 * `chosen` (the evaluation whose approvers decide) with each limit at the strictest any candidate
 * that asks for approval sets: automatic approval or grants forbidden, no self-approval, the larger
 * quorum, the shorter expiry. An input that may fall under several rules must meet every one of
 * them, and two rules that name other approvers are stricter each in its own way: taking the
 * chosen one whole would let a laxer `input:` rule's `autoApprove` run a call another forbids to
 * run unseen. Who may approve stays the chosen one's (approver lists cannot be intersected in
 * general), and so do the rest (`onExpiry`, `notify`, the ladder), which hold nothing back. A limit
 * is tightened only as far as those approvers can still meet it, as the config loader demands of
 * every rule: a quorum no larger than the people they name, and self-approval where they name the
 * requester; otherwise the card could never be approved, only wait to expire.
 *
 * The reminder belongs to the expiry it counts back from: the chosen one's, while it still comes
 * before the expiry, else that of the rule whose expiry was taken. Where a limit was tightened the
 * evaluation is no longer its rule's alone, so the rule's fingerprint is combined with the limits
 * (`tightenedFingerprint`): a deploy that changes what another rule adds is then seen as a change
 * (`unchangedSince`), and a grant given under the rule alone does not cover it. Pure.
 */
export function withStrictestLimits({ chosen, candidates }: { chosen: PolicyEvaluation; candidates: readonly PolicyEvaluation[] }): PolicyEvaluation {
  if (!chosen.needsApproval) return chosen;
  const asking = [chosen, ...candidates.filter((candidate) => candidate.needsApproval)];
  const expiryFrom = asking.reduce((shortest, candidate) => (candidate.expiryMs < shortest.expiryMs ? candidate : shortest));
  const reminderMs = [chosen.reminderMs, expiryFrom.reminderMs].find((reminder) => reminder !== undefined && reminder < expiryFrom.expiryMs);
  const quorum = Math.max(...asking.map((candidate) => candidate.required));
  const limits: PolicyLimits = {
    autoApprove: asking.some((candidate) => candidate.autoApprove === 'forbidden') ? 'forbidden' : chosen.autoApprove,
    grants: asking.reduce<GrantPermission>((strictest, { grants }) => (GRANT_STRICTNESS[grants] > GRANT_STRICTNESS[strictest] ? grants : strictest), chosen.grants),
    allowSelfApproval: chosen.approvers.some((approver) => approver.kind === 'requester') || asking.every((candidate) => candidate.allowSelfApproval),
    required: Math.max(chosen.required, Math.min(quorum, namedPeople(chosen) ?? Infinity)),
    expiryMs: expiryFrom.expiryMs,
    ...(reminderMs === undefined ? {} : { reminderMs }),
  };
  if (sameLimits(limits, chosen)) return chosen;
  const { reminderMs: _ownReminder, rule, ...rest } = chosen;
  return { ...rest, ...limits, rule: rule?.fingerprint === undefined ? rule : { ...rule, fingerprint: tightenedFingerprint({ fingerprint: rule.fingerprint, limits }) } };
}

/** How many people the approvers name, when only named users (and the requester) can approve; undefined for a group or the channel. */
function namedPeople({ approvers }: PolicyEvaluation): number | undefined {
  return approvers.every((approver) => approver.kind === 'user' || approver.kind === 'requester') ? approvers.length : undefined;
}

function sameLimits(limits: PolicyLimits, evaluation: PolicyEvaluation): boolean {
  return (
    limits.autoApprove === evaluation.autoApprove &&
    limits.grants === evaluation.grants &&
    limits.allowSelfApproval === evaluation.allowSelfApproval &&
    limits.required === evaluation.required &&
    limits.expiryMs === evaluation.expiryMs &&
    limits.reminderMs === evaluation.reminderMs
  );
}

export const AUTO_APPROVE_STRICTNESS: Record<AutoApprovePermission, number> = { allowed: 0, forbidden: 1 };
export const GRANT_STRICTNESS: Record<GrantPermission, number> = { allowed: 0, identicalArguments: 1, forbidden: 2 };
