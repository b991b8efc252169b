import { approverKey, type EscalationStage } from '../../config/policy-config-schema.js';
import type { StepEscalation } from '../pending-step.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/** `evaluation` with `added` approvers too (each once): what a hop of the ladder does to a call. */
export function withAddedApprovers(evaluation: PolicyEvaluation, added: EscalationStage['addApprovers']): PolicyEvaluation {
  const known = new Set(evaluation.approvers.map(approverKey));
  const fresh = added.filter((approver) => !known.has(approverKey(approver)));
  return fresh.length === 0 ? evaluation : { ...evaluation, approvers: [...evaluation.approvers, ...fresh.map((approver) => ({ ...approver }))] };
}

/** A policy for a new version (an edit) keeps every approver the hops made so far added. */
export function withEscalationSoFar(evaluation: PolicyEvaluation, escalation: StepEscalation | undefined): PolicyEvaluation {
  if (!escalation) return evaluation;
  return escalation.ladder.slice(0, escalation.done).reduce((policy, stage) => withAddedApprovers(policy, stage.addApprovers), evaluation);
}
