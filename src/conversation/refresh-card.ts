import type { Logger } from 'pino';
import { keepCardToRedraw } from '../approvals/card-refreshes.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { showStep } from '../approvals/show-step.js';
import { isFencedError } from '../store/fenced-error.js';
import type { StateStore } from '../store/state-store.js';
import type { TurnScope } from './turn-scope.js';

/**
 * Shows a step's new state on its card and its copies. A card Slack will not update is not fatal:
 * the model and the audit trail already know, and the sweep draws it again (`keepCardToRedraw`);
 * losing the thread (fenced) still stops the turn.
 */
export async function refreshCard({ scope, step, logger, store, now }: { scope: Pick<TurnScope, 'messenger'>; step: PendingStep; logger: Logger; store: Pick<StateStore, 'scheduleCardRefresh'>; now: () => number }): Promise<void> {
  if (step.cardTs === undefined) return;
  try {
    await showStep({ messenger: scope.messenger, step, logger });
  } catch (error) {
    if (isFencedError(error)) throw error;
    logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
    await keepCardToRedraw({ store, stepId: step.stepId, logger, at: now() });
  }
}
