import { approverKey } from '../../config/policy-config-schema.js';
import { canonicalJson, currentVersion } from '../input-version.js';
import { isQuestion, undecidedCalls, type LadderRule, type PendingCall, type PendingStep } from '../pending-step.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/** The rule an evaluation is under, as a step's ladder records it: `defaults` when no rule covered the call. */
export function ladderRuleOf(evaluation: Pick<PolicyEvaluation, 'rule'>): LadderRule {
  const { rule } = evaluation;
  if (rule === undefined) return 'defaults';
  return { index: rule.index, ...(rule.name === undefined ? {} : { name: rule.name }), ...(rule.fingerprint === undefined ? {} : { fingerprint: rule.fingerprint }) };
}

/**
 * The rule whose ladder the step follows. Steps stored before the ladder recorded its rule get the
 * one `buildPendingStep` took it from (`ladderSource`). Undefined when no call has one: the ladder
 * then applies to no call.
 */
export function stepLadderRule(step: Pick<PendingStep, 'escalation' | 'calls'>): LadderRule | undefined {
  if (!step.escalation) return undefined;
  if (step.escalation.rule !== undefined) return step.escalation.rule;
  const source = ladderSource(step);
  return source ? ladderRuleOf(source) : undefined;
}

/**
 * The policy the step's ladder came from, as `buildPendingStep` took it: that of the first call whose
 * model version needs approval under a rule with a ladder (a call's `policy` never changes, so this
 * is the same call it was then).
 */
function ladderSource(step: Pick<PendingStep, 'calls'>): PolicyEvaluation | undefined {
  return step.calls.find((call) => call.policy?.needsApproval && (call.policy.escalation?.length ?? 0) > 0)?.policy;
}

/**
 * Whether the step's ladder speaks for an input under `evaluation`: only when it is under the rule
 * the ladder came from. Fallback approvers are that rule's answer to a slow request; under any other
 * rule (an edit to prod, another call of the step) they are nobody, and that rule's own approvers decide.
 */
export function onStepLadder({ step, evaluation }: { step: Pick<PendingStep, 'escalation' | 'calls'>; evaluation: PolicyEvaluation }): boolean {
  const ladderRule = stepLadderRule(step);
  if (ladderRule === undefined || !sameRule(ladderRule, ladderRuleOf(evaluation))) return false;
  return ladderRule !== 'defaults' || sameDefaults(ladderSource(step), evaluation);
}

/**
 * By content (`ruleFingerprint`): after a deploy that inserts, reorders or edits rules, the rule now
 * at the ladder's place is not the one whose ladder it is. A ladder or evaluation stored before rules
 * had fingerprints is matched by index and name, as then. `policy.defaults` has no fingerprint: see
 * `sameDefaults`.
 */
function sameRule(left: LadderRule, right: LadderRule): boolean {
  if (left === 'defaults' || right === 'defaults') return left === right;
  if (left.fingerprint !== undefined || right.fingerprint !== undefined) return left.fingerprint === right.fingerprint;
  return left.index === right.index && left.name === right.name;
}

/**
 * `policy.defaults` as they were when the ladder was made, by content, against those `evaluation`
 * is under: `'defaults'` names no particular defaults, and after a deploy that took a fallback off
 * their ladder (or changed anything else of them, as a named rule's fingerprint would change) the
 * defaults in force are not the ones whose ladder it is. The call the ladder came from kept them
 * (its `policy`), so this holds for steps stored before as well. None found: the ladder is nobody's.
 */
function sameDefaults(source: PolicyEvaluation | undefined, evaluation: PolicyEvaluation): boolean {
  return source !== undefined && defaultsPrint(source) === defaultsPrint(evaluation);
}

/** The settings of the defaults an evaluation is under: without the approvers hops added, in any order. */
function defaultsPrint(evaluation: PolicyEvaluation): string {
  const { rule: _rule, needsApproval: _needsApproval, escalatedApprovers, ...settings } = evaluation;
  const added = new Set(escalatedApprovers ?? []);
  const own = settings.approvers.map(approverKey).filter((key) => !added.has(key));
  return canonicalJson({ ...settings, approvers: own.sort() });
}

/**
 * Whether two evaluations have the same ladder for the same approvers: the hops and the rule's own
 * approvers (those a hop added left out), compared by content, whatever else of the rule changed.
 * A deploy that adds a reminder to the ladder's rule changes its fingerprint but not its answer
 * to a slow request, so the fallback approvers a hop added stay approvers under the config in force.
 */
export function sameLadder(left: PolicyEvaluation, right: PolicyEvaluation): boolean {
  if ((left.escalation?.length ?? 0) === 0 || (right.escalation?.length ?? 0) === 0) return false;
  return ladderPrint(left) === ladderPrint(right);
}

function ladderPrint(evaluation: PolicyEvaluation): string {
  const added = new Set(evaluation.escalatedApprovers ?? []);
  const own = evaluation.approvers.map(approverKey).filter((key) => !added.has(key));
  const hops = (evaluation.escalation ?? []).map((stage) => ({ ...stage, addApprovers: stage.addApprovers.map(approverKey).sort() }));
  return canonicalJson({ hops, approvers: [...new Set(own)].sort() });
}

/** The calls still waiting that a hop of the step's ladder reaches: approvals whose current version is under its rule. */
export function callsOnStepLadder(step: PendingStep): PendingCall[] {
  return undecidedCalls(step).filter((call) => {
    const version = currentVersion(call);
    return !isQuestion(call) && version !== undefined && onStepLadder({ step, evaluation: version.policy });
  });
}
