import type { CallAction } from './transitions/call-action.js';

/** What a decision is called in the sentence telling its maker that whether it was recorded is not known. */
const DECISION_NOUN: Record<CallAction['kind'], string> = { approve: 'approval', deny: 'denial', edit: 'edit', answer: 'answer' };

/**
 * What the person is told when their decision's write may have landed but its reply was lost and
 * Redis did not answer again in time: "nothing changed" would be false if it landed (an approval
 * that will run, a denial that stands), and they might decide again elsewhere or ask a colleague to.
 */
export function unsettledDecisionText(kind: CallAction['kind']): string {
  const noun = DECISION_NOUN[kind];
  return `:warning: I could not confirm whether your ${noun} was recorded (Redis did not answer in time). The card will show the outcome once Redis answers again; do not ${kind} again elsewhere until then.`;
}
