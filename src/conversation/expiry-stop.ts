import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import { currentVersion } from '../approvals/input-version.js';
import { isQuestion, type PendingStep } from '../approvals/pending-step.js';
import type { ThreadState } from '../store/thread-state.js';
import type { TurnScope } from './turn-scope.js';

/**
 * Every call expired unanswered and their rules say expiry ends the turn (`onExpiry: stop`). A
 * question that expired (only a scheduled turn's do) has no rule: it neither ends the turn nor keeps
 * it going, and alone it lets the model go on, told that nobody answered. Judged from the step
 * alone, so the recovery of an interrupted resume judges it as its claim did.
 */
export function stopsOnExpiry(step: PendingStep): boolean {
  const outcomes = step.calls.map((call) => ({ call, decision: step.decisions[call.approvalId] }));
  if (!outcomes.some(({ call, decision }) => decision?.outcome === 'expired' && !isQuestion(call))) return false;
  return outcomes.every(({ call, decision }) =>
    decision?.outcome === 'expired'
      ? isQuestion(call) || ((currentVersion(call)?.policy ?? call.policy)?.onExpiry ?? 'stop') === 'stop'
      : decision?.outcome !== 'approved' && decision?.outcome !== 'answered',
  );
}

/** What the thread hears when expiry ends the turn: a call someone denied is told apart from one nobody decided. */
export function stoppedOnExpiryText(step: PendingStep): string {
  const decisions = step.calls.map((call) => step.decisions[call.approvalId]);
  // A call countersign closed (an approval that no longer held, groups unread, nobody left to approve, past a card's limit) was denied by nobody.
  const denied = decisions.filter((decision) => decision?.outcome === 'denied' && decision.userId !== COUNTERSIGN_ACTOR).length;
  const closed = decisions.filter((decision) => decision?.outcome === 'denied' && decision.userId === COUNTERSIGN_ACTOR).length;
  if (denied === 0 && closed === 0) return ':alarm_clock: The approval request expired without a decision, so nothing was run. Mention me to try again.';
  const expired = decisions.filter((decision) => decision?.outcome === 'expired').length;
  const parts = [
    ...(denied === 0 ? [] : [denied === 1 ? '1 call was denied' : `${denied} calls were denied`]),
    ...(closed === 0 ? [] : [closed === 1 ? '1 call was not run (countersign closed it; the card says why)' : `${closed} calls were not run (countersign closed them; the card says why)`]),
    `${expired} expired without a decision`,
  ];
  return `:alarm_clock: The approval request expired: ${parts.join(', ').replace(/, ([^,]*)$/, ' and $1')}, so nothing was run. Mention me to try again.`;
}

/**
 * Posts the notice of the turn expiry ended (`ThreadState.unpostedStopNotice`, saved with the
 * claim), then forgets it was unposted; that rides with the item's finish. A process dying in
 * between posts it a second time, which is better than a thread that never hears its turn ended.
 * False when there was none to post.
 */
export async function postStopNotice(scope: TurnScope, thread: ThreadState): Promise<boolean> {
  const text = thread.unpostedStopNotice;
  if (text === undefined) return false;
  await scope.messenger.postNotice({ channel: thread.channel, threadTs: thread.threadTs, text });
  delete thread.unpostedStopNotice;
  // Nothing ran in a turn expiry ended: every call of it has its result.
  scope.saveAtEnd(thread, { settled: true });
  return true;
}
