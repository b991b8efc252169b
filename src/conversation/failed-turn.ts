import type { FailedTurn } from '../store/thread-state.js';
import { scheduleNameOf } from './schedule-actor.js';

export type RetryJudgement =
  | { allowed: true; requesterId: string }
  | { allowed: false; code: 'nothing-to-retry' | 'not-requester'; message: string };

/**
 * Whether a Try again click may run the failed turn again, and for whom. A turn keeps its
 * requester for its whole life: the retry runs for the person who asked, never for whoever
 * clicked, and only they may start it (anyone else can ask for themselves with a new message).
 * A scheduled turn has no person who asked, so anyone in its channel may retry it (the click is
 * judged against the thread of the channel it came from); it still runs as the schedule, so the
 * schedule's `autoApprove` applies and the clicker's own standing plays no part.
 * Without `failureId` the thread's current failure is meant.
 */
export function judgeRetry(failed: FailedTurn | undefined, click: { clickedBy: string; failureId?: string }): RetryJudgement {
  if (!failed || (click.failureId !== undefined && click.failureId !== failed.id)) {
    return { allowed: false, code: 'nothing-to-retry', message: 'There is nothing to retry here any more.' };
  }
  if (failed.requesterId !== click.clickedBy && scheduleNameOf(failed.requesterId) === undefined) {
    return { allowed: false, code: 'not-requester', message: `Only <@${failed.requesterId}>, who asked, can try this again. To ask yourself, send a message.` };
  }
  return { allowed: true, requesterId: failed.requesterId };
}
