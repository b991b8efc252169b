import { approverKey, type EscalationStage } from '../../config/policy-config-schema.js';
import type { PendingStep } from '../pending-step.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { onStepLadder } from './escalation-scope.js';

/**
 * `evaluation` with `added` approvers too (each once): what a hop of the ladder does to a call. The
 * ones it adds are recorded, so `withoutEscalation` can tell them from the rule's own even when
 * the ladder names someone the rule already had.
 */
export function withAddedApprovers(evaluation: PolicyEvaluation, added: EscalationStage['addApprovers']): PolicyEvaluation {
  const known = new Set(evaluation.approvers.map(approverKey));
  const fresh = added.filter((approver) => !known.has(approverKey(approver)));
  if (fresh.length === 0) return evaluation;
  return {
    ...evaluation,
    approvers: [...evaluation.approvers, ...fresh.map((approver) => ({ ...approver }))],
    escalatedApprovers: [...(evaluation.escalatedApprovers ?? []), ...fresh.map(approverKey)],
  };
}

/**
 * The rule's own policy for a call a ladder escalated: its approvers without those the hops added.
 * What a grant carries, since later calls under the rule are judged by the rule alone (fallback
 * approvers are its answer to this one slow request, not approvers of its calls).
 */
export function withoutEscalation(evaluation: PolicyEvaluation): PolicyEvaluation {
  const { escalatedApprovers, ...own } = evaluation;
  if (escalatedApprovers === undefined) return evaluation;
  const added = new Set(escalatedApprovers);
  return { ...own, approvers: own.approvers.filter((approver) => !added.has(approverKey(approver))) };
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
