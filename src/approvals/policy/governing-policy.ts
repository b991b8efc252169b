import { approverKey, type EscalationStage } from '../../config/policy-config-schema.js';
import { canonicalJson } from '../input-version.js';
import type { PendingCall, PendingStep } from '../pending-step.js';
import { authorizeApprover, type Authorization } from './authorize-approver.js';
import { withAddedApprovers, withEscalationSoFar } from './escalated-approvers.js';
import { sameLadder } from './escalation-scope.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/** The config in force in this process, asked about an input of a waiting call. */
export type CurrentEvaluation = (options: { step: PendingStep; call: PendingCall; input: unknown }) => Promise<PolicyEvaluation>;

/**
 * What decides a waiting version: the policy stored with it (what its card showed, with the ladder's
 * hops so far) and, where the config in force says something else of the same input, that too. A
 * person must be let approve by both, the larger quorum counts, and either one's self-approval ban
 * holds. So a deploy that loosened the policy never loosens a waiting card, and one that tightened it
 * applies to it; with replicas on two configs during a rolling deploy, the stricter of them decides.
 * Two approver lists cannot in general be intersected into one (a group against named users), so
 * both are kept and each is asked.
 */
export interface GoverningPolicy {
  stored: PolicyEvaluation;
  /** The config in force, when it asks for approval and is not the stored rule as it stood. */
  current?: PolicyEvaluation;
  required: number;
}

export function governingPolicy({ step, stored, current }: { step: Pick<PendingStep, 'escalation' | 'calls'>; stored: PolicyEvaluation; current: PolicyEvaluation | undefined }): GoverningPolicy {
  if (current === undefined || !current.needsApproval || unchangedSince({ step, stored, current })) return { stored, required: stored.required };
  const now = withHopsSoFar({ step, stored, current });
  return { stored, current: now, required: Math.max(stored.required, now.required) };
}

/**
 * The config in force's evaluation with the fallback approvers the hops so far added to the card.
 * They stay while the config in force keeps the ladder's rule, or a rule with the same ladder and
 * the same approvers of its own (a deploy that only added a reminder or changed the expiry edits
 * the rule, not the ladder: the hop the sweep announced must still let its approvers decide).
 * Under another rule, or another ladder, they are nobody there, and the intersection drops them.
 */
function withHopsSoFar({ step, stored, current }: { step: Pick<PendingStep, 'escalation' | 'calls'>; stored: PolicyEvaluation; current: PolicyEvaluation }): PolicyEvaluation {
  const onLadder = withEscalationSoFar({ evaluation: current, step });
  if (stored.escalatedApprovers === undefined || !sameLadder(stored, current)) return onLadder;
  const added = new Set(stored.escalatedApprovers);
  const hopApprovers = stored.approvers.filter((approver): approver is EscalationStage['addApprovers'][number] => added.has(approverKey(approver)) && (approver.kind === 'user' || approver.kind === 'group'));
  return withAddedApprovers(onLadder, hopApprovers);
}

/**
 * Whether the config in force says of this input what `stored` says: the same rule, by content
 * (`ruleFingerprint`), or, where either lacks a fingerprint (the defaults, or a policy stored
 * before fingerprints), the same evaluation. Undefined `current`: nobody asked, as in tests of
 * the stored policy alone.
 */
export function unchangedSince({ step, stored, current }: { step: Pick<PendingStep, 'escalation' | 'calls'>; stored: PolicyEvaluation; current: PolicyEvaluation | undefined }): boolean {
  if (current === undefined) return true;
  const storedPrint = stored.rule?.fingerprint;
  const currentPrint = current.rule?.fingerprint;
  if (storedPrint !== undefined && currentPrint !== undefined) return storedPrint === currentPrint;
  return canonicalJson(stored) === canonicalJson(withEscalationSoFar({ evaluation: current, step }));
}

export const POLICY_CHANGED_TEXT = 'under the approval policy now in force, which changed since the card was posted';
/** Said to someone the config in force names but the card does not: the card's policy still governs too. */
export const CARD_POLICY_TEXT = 'under the policy this card was posted with, which still applies together with the one now in force';

/**
 * `authorizeApprover` under every evaluation of `governing`, the stored one first (its refusal reads
 * as it always did); a refusal only the config in force gives says so, since the card said otherwise,
 * and one the card gives someone the config in force names says the card's policy still applies.
 * Approving takes both; denying takes either, since a veto only stops a call: after a deploy that
 * replaced the approvers, the card's and the new ones may each still deny what neither can approve.
 */
export function authorizeGoverned({
  governing,
  ...request
}: Omit<Parameters<typeof authorizeApprover>[0], 'evaluation'> & { governing: GoverningPolicy }): Authorization {
  const { stored, current, required } = governing;
  const underStored = authorizeApprover({ ...request, evaluation: { ...stored, required } });
  if (current === undefined) return underStored;
  const underCurrent = authorizeApprover({ ...request, evaluation: { ...current, required } });
  if (request.action === 'deny' && (underStored.allowed || underCurrent.allowed)) return { allowed: true };
  if (!underStored.allowed) {
    if (underStored.code !== 'not-eligible' || !underCurrent.allowed) return underStored;
    return { ...underStored, reason: `${underStored.reason} ${CARD_POLICY_TEXT}` };
  }
  if (underCurrent.allowed || underCurrent.code === 'groups-unresolved' || underCurrent.code === 'already-approved') return underCurrent;
  return { ...underCurrent, reason: `${underCurrent.reason} ${POLICY_CHANGED_TEXT}` };
}

/** The evaluations of `governing`, for the groups to resolve and the limits every one of them sets. */
export function governingEvaluations(governing: GoverningPolicy): PolicyEvaluation[] {
  return governing.current === undefined ? [governing.stored] : [governing.stored, governing.current];
}
