import { randomUUID } from 'node:crypto';
import type { CarriedApproval, FailedTurn, ThreadState } from '../store/thread-state.js';
import { scheduleNameOf } from './schedule-actor.js';
import type { TurnScope } from './turn-scope.js';

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

/** The failure whose Try again the running turn is, while that retry is taken in (see `FailedTurn.retrying`). */
export function retriedFailureId(failed: FailedTurn | undefined): string | undefined {
  return failed?.retrying ? failed.id : undefined;
}

/**
 * The failure a turn leaves, saved before its notice is posted. It keeps its notice until
 * `postFailureNotice` has posted it: the process that takes the turn's item over after a crash in
 * between posts it then (`postUnpostedNotice`), as nothing else would. A retried turn's names the
 * failure it retried.
 */
export function newFailedTurn(options: { requesterId: string; at: number; notice: string; retryOf?: string; approvedCalls?: CarriedApproval[] }): FailedTurn {
  const { requesterId, at, notice, retryOf, approvedCalls = [] } = options;
  return { id: randomUUID(), requesterId, at, ...(approvedCalls.length > 0 ? { approvedCalls } : {}), ...(retryOf === undefined ? {} : { retryOf }), unpostedNotice: notice };
}

/**
 * Posts the thread's failure notice, with Try again, and then forgets it was unposted. That is saved
 * with the item's finish (one round trip): a process dying before it posts the notice a second time,
 * which is better than a thread that never hears its turn failed.
 */
export async function postFailureNotice(scope: TurnScope, thread: ThreadState, options: { text: string; settled?: boolean }): Promise<void> {
  await scope.messenger.postNotice({ channel: thread.channel, threadTs: thread.threadTs, text: options.text, retryButton: true });
  if (thread.failedTurn?.unpostedNotice === undefined) return;
  delete thread.failedTurn.unpostedNotice;
  scope.saveAtEnd(thread, options.settled ? { settled: true } : {});
}

/**
 * The notice of the thread's failure, when the process that saved the failure stopped before
 * posting it: only that notice offers Try again, and without it the thread would never hear the
 * turn failed. True when it was posted here.
 */
export async function postUnpostedNotice(scope: TurnScope, thread: ThreadState): Promise<boolean> {
  const text = thread.failedTurn?.unpostedNotice;
  if (text === undefined) return false;
  await postFailureNotice(scope, thread, { text });
  return true;
}
