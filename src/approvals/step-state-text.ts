import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import { currentVersion } from './input-version.js';
import { decisionOf, isQuestion, type PendingCall, type PendingStep } from './pending-step.js';

/** Calls named one by one; a card holds more, but a notice is short. */
const MAX_NAMED_CALLS = 5;

/**
 * What became of a step's calls, in one line for a notice in the thread (when its card cannot show
 * it): "Now: `restart_service` waits for approval of version 2." Names nobody, so it pings nobody.
 */
export function stepStateText(step: PendingStep): string {
  const named = step.calls.slice(0, MAX_NAMED_CALLS).map((call) => `\`${call.toolName}\` ${callState(step, call)}`);
  const more = step.calls.length - named.length;
  return `Now: ${named.join('; ')}${more > 0 ? `; and ${more} more ${more === 1 ? 'call' : 'calls'}` : ''}.`;
}

function callState(step: PendingStep, call: PendingCall): string {
  const decision = decisionOf(step, call.approvalId);
  if (decision === undefined) {
    if (step.phase !== 'pending') return 'is closed';
    if (isQuestion(call)) return 'waits for an answer';
    const number = currentVersion(call)?.number ?? 0;
    // Versions are counted from one on the card and in the editor's notice.
    return number > 0 ? `waits for approval of version ${number + 1} (edited)` : 'waits for approval';
  }
  switch (decision.outcome) {
    case 'approved':
      return 'was approved';
    case 'denied':
      return decision.userId === COUNTERSIGN_ACTOR ? 'was closed without running' : 'was denied';
    case 'answered':
      return 'was answered';
    case 'expired':
      return 'expired';
    case 'superseded':
      return 'was closed by a newer message';
  }
}
