import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import { hookNameOf } from './approval-hook.js';
import { decisionOf, type PendingStep } from './pending-step.js';

/**
 * Who steered the turn through the step's decisions: the people other than the requester whose
 * text the model was told and acts on next, that is who answered a question, or denied a call or
 * declined a question with a reason. What they wrote may be the very call the model asks for next
 * ("Do not list pods. Restart payments-db instead"): a rule that forbids self-approval must exclude
 * them as it would have had they asked, and so must their grants. A Deny without a reason tells the
 * model nothing of theirs, and the bot's or a hook's denials are no person's.
 */
export function turnInstigators(step: PendingStep): string[] {
  const instigators = step.calls.flatMap((call) => {
    const decision = decisionOf(step, call.approvalId);
    const steered = decision?.outcome === 'answered' || (decision?.outcome === 'denied' && decision.reason !== undefined);
    if (!decision || !steered || decision.userId === step.requesterId) return [];
    return decision.userId === COUNTERSIGN_ACTOR || hookNameOf(decision.userId) !== undefined ? [] : [decision.userId];
  });
  return [...new Set(instigators)];
}
