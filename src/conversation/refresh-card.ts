import type { Logger } from 'pino';
import { keepCardToRedraw } from '../approvals/card-refreshes.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { showLatestStep } from '../approvals/show-latest-step.js';
import { isFencedError } from '../store/fenced-error.js';
import type { PendingCardRefresh, StateStore } from '../store/state-store.js';
import type { TurnScope } from './turn-scope.js';

/**
 * Shows a step's new state on its card and its copies. A card Slack will not update is not fatal:
 * the model and the audit trail already know, and the sweep draws it again (`keepCardToRedraw`);
 * losing the thread (fenced) still stops the turn. `kept`: a refresh kept for the sweep before the
 * step was written (`writeThenShowCard`): forgotten once the card is shown, due at once if Slack
 * would not update it, and left for the sweep when this process lost the thread.
 */
export async function refreshCard({
  scope,
  step,
  logger,
  store,
  now,
  kept,
}: {
  scope: Pick<TurnScope, 'messenger'>;
  step: PendingStep;
  logger: Logger;
  store: Pick<StateStore, 'getStep' | 'scheduleCardRefresh' | 'forgetCardRefresh'>;
  now: () => number;
  kept?: PendingCardRefresh;
}): Promise<void> {
  // A step with no card on record (its first post's outcome not known) may have copies all the
  // same: `showStep` draws them, and skips the card. Read again after drawing (`showLatestStep`): a
  // decision written meanwhile, drawn by its own process before this draw landed, would otherwise be
  // hidden behind this older state for good (a decided step is drawn once), as would a copy recorded
  // while the step was being written.
  if (step.cardTs !== undefined || (step.copies ?? []).length > 0) {
    try {
      await showLatestStep({ store, messenger: scope.messenger, step, logger });
    } catch (error) {
      if (isFencedError(error)) throw error;
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
      await keepCardToRedraw({ store, stepId: step.stepId, logger, at: now(), ...(kept ? { refresh: kept } : {}) });
      return;
    }
  }
  // A record left behind costs the sweep one more update of the card, as it stands.
  if (kept) await store.forgetCardRefresh(kept).catch(() => false);
}
