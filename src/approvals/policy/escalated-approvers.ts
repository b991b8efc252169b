import { approverKey, type EscalationStage } from '../../config/policy-config-schema.js';
import type { PendingStep } from '../pending-step.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { onStepLadder } from './escalation-scope.js';

/** `evaluation` with `added` approvers too (each once): what a hop of the ladder does to a call. */
export function withAddedApprovers(evaluation: PolicyEvaluation, added: EscalationStage['addApprovers']): PolicyEvaluation {
  const known = new Set(evaluation.approvers.map(approverKey));
  const fresh = added.filter((approver) => !known.has(approverKey(approver)));
  return fresh.length === 0 ? evaluation : { ...evaluation, approvers: [...evaluation.approvers, ...fresh.map((approver) => ({ ...approver }))] };
}

/**
 * A policy for a new version (an edit) keeps every approver the hops made so far added, if it is
 * under the rule the ladder came from; under another rule it is that rule's policy alone.
 */
export function withEscalationSoFar({ evaluation, step }: { evaluation: PolicyEvaluation; step: Pick<PendingStep, 'escalation' | 'calls'> }): PolicyEvaluation {
  const { escalation } = step;
  if (!escalation || !onStepLadder({ step, evaluation })) return evaluation;
  return escalation.ladder.slice(0, escalation.done).reduce((policy, stage) => withAddedApprovers(policy, stage.addApprovers), evaluation);
}
