import type { ModelMessage } from 'ai';
import type { PendingStep } from '../approvals/pending-step.js';
import { isResumeMessageOf } from './decision-messages.js';
import { INTERRUPTED_CALL } from './interrupted-calls.js';

/**
 * Whether the history holds `step`'s resumed turn still waiting for the model: it has the step's
 * resume message (`isResumeMessageOf`), and after it only what a recovery wrote of the calls a
 * stopped process started (`recordUnrecordedCalls`: the calls, then their "interrupted" results).
 * A recovery that was itself interrupted right after that save leaves it so, and the turn is
 * still this resume's to finish. The turn's own messages are saved only when it ends (an answer,
 * a new step's calls, a failure), and any of them after the resume message means it went on.
 */
export function resumedTurnUnfinished(step: PendingStep, messages: readonly ModelMessage[]): boolean {
  const at = messages.findLastIndex((message) => isResumeMessageOf(step, message));
  if (at === -1 || messages.at(-1)?.role !== 'tool') return false;
  return messages.slice(at + 1).every(isRecordOfInterruptedCalls);
}

function isRecordOfInterruptedCalls(message: ModelMessage): boolean {
  if (message.role === 'assistant') return typeof message.content !== 'string' && message.content.length > 0 && message.content.every((part) => part.type === 'tool-call');
  if (message.role !== 'tool') return false;
  return message.content.every((part) => part.type === 'tool-result' && part.output.type === 'error-text' && part.output.value === INTERRUPTED_CALL);
}
