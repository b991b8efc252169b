import type { Logger } from 'pino';
import type { PendingStep } from '../approvals/pending-step.js';
import { showStep } from '../approvals/show-step.js';
import { isFencedError } from '../store/fenced-error.js';
import type { TurnScope } from './turn-scope.js';

/**
 * Shows a step's new state on its card and its copies. A card Slack will not update is logged, not
 * fatal: the model and the audit trail already know; losing the thread (fenced) still stops the turn.
 */
export async function refreshCard({ scope, step, logger }: { scope: Pick<TurnScope, 'messenger'>; step: PendingStep; logger: Logger }): Promise<void> {
  if (step.cardTs === undefined) return;
  try {
    await showStep({ messenger: scope.messenger, step, logger });
  } catch (error) {
    if (isFencedError(error)) throw error;
    logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
  }
}
