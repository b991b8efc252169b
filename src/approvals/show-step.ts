import type { Logger } from 'pino';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { slackMayTakeItLater } from '../errors/countersign-error.js';
import { isFencedError } from '../store/fenced-error.js';
import type { PendingStep } from './pending-step.js';

/**
 * Shows a step as it is now on its card in the thread and on every copy elsewhere, each with its
 * own `chat.update` (the copies sit in different channels, so Slack's per-channel limit is not
 * shared). A copy that cannot be updated is logged and does not stop the others; a failure on the
 * thread's card is thrown after all were tried, as is a fenced write, for the caller to handle, and
 * a copy's that Slack failed for now (a 503, a rate limit): the caller draws the step again later
 * (`CardRefreshes`, `keepCardToRedraw`), since nothing else would, and the copy would show an older
 * state (live buttons on a decided request) for good. A copy Slack refuses for good is only logged.
 */
export async function showStep({ messenger, step, logger }: { messenger: Pick<ThreadMessenger, 'updateStepCard' | 'updateStepCopy'>; step: PendingStep; logger: Logger }): Promise<void> {
  const { cardTs } = step;
  const copies = step.copies ?? [];
  const [thread, ...onCopies] = await Promise.allSettled([
    cardTs === undefined ? Promise.resolve() : messenger.updateStepCard({ step: { ...step, cardTs } }),
    ...copies.map((copy) => messenger.updateStepCopy({ step, copy })),
  ]);
  let fenced: unknown;
  let forNow: unknown;
  onCopies.forEach((result, index) => {
    if (result.status === 'fulfilled') return;
    if (isFencedError(result.reason)) fenced = result.reason;
    else {
      logger.warn({ event: 'card-copy-update-failed', stepId: step.stepId, channel: copies[index]?.channel, err: result.reason }, 'could not update a copy of the approval card');
      if (forNow === undefined && slackMayTakeItLater(result.reason)) forNow = result.reason;
    }
  });
  if (thread?.status === 'rejected') throw thread.reason;
  if (fenced !== undefined) throw fenced;
  if (forNow !== undefined) throw forNow;
}
