import { COUNTERSIGN_ACTOR, denialReason } from '../agent/decision-messages.js';
import { approvedCallsAwaitingRun } from '../agent/unavailable-tools.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { closeCarriedApprovalsTransition } from '../approvals/transitions/close-step.js';
import type { CarriedApproval, ThreadState } from '../store/thread-state.js';
import { writeThenShowCard } from './card-after-write.js';
import { withWithdrawals } from './carried-approvals.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { type StepWithThreadWrite, saveWithStepRetrying } from './save-with-step-retrying.js';
import type { TurnScope } from './turn-scope.js';

/** A resumed step is written only by holders of its thread, and this one holds it: a conflict is all but impossible. */
const MAX_ATTEMPTS = 5;

/** Why the call did not run, on its card, in the audit trail and for the model. */
const CLOSED_BY_NEWER_MESSAGE = 'its turn stopped before it ran, and a newer message came instead of Try again';

/**
 * A new message moves the thread on from a failed turn (its notice offers Try again "or send another
 * message"): the approvals that turn kept for its Try again (`FailedTurn.approvedCalls`), of calls it
 * never started, lapse with it, since only that Try again would have run them. Each is closed on its
 * step as countersign's (the card says "Not run" and why, not "Approved by …"), told to the model as
 * not run with that reason, and audited, in one write with the thread. Without this the message's
 * take-in dropped the failure silently: the card kept saying "Approved", the model was told the
 * call was interrupted, and nothing could run it any more. A carried call whose executing marker
 * was written is left to the take-in, which tells it as interrupted (it may have run).
 */
export function createCarriedApprovalsClosing({ store, logger, now }: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>) {
  return async function closeCarriedApprovals(scope: TurnScope, thread: ThreadState): Promise<void> {
    const carried = thread.failedTurn?.approvedCalls ?? [];
    if (carried.length === 0) return;
    const awaiting = new Set(approvedCallsAwaitingRun(thread.messages).map((call) => call.toolCallId));
    const started = await store.executingCalls(thread.threadKey);
    const closing = carried.filter((approval) => awaiting.has(approval.toolCallId) && !started.has(approval.toolCallId));
    for (const stepId of new Set(closing.map((approval) => approval.stepId))) {
      await closeOnStep(scope, thread, stepId, closing.filter((approval) => approval.stepId === stepId));
    }
  };

  /** Shown on the card crash-safely: a process stopping right after the write must not leave it saying "Approved by" (`writeThenShowCard`). */
  function closeOnStep(scope: TurnScope, thread: ThreadState, stepId: string, approvals: readonly CarriedApproval[]): Promise<void> {
    return writeThenShowCard({ scope, store, stepId, logger, now }, () => writeClosed(scope, thread, stepId, approvals));
  }

  /** Closes the approvals on their step with the thread; returns the step as written, or undefined when there was nothing to close on it. */
  function writeClosed(scope: TurnScope, thread: ThreadState, stepId: string, approvals: readonly CarriedApproval[]): Promise<PendingStep | undefined> {
    const approvalIds = approvals.map((approval) => approval.approvalId);
    const writeFor = (step: PendingStep | undefined): StepWithThreadWrite<PendingStep | undefined> => {
      const transition = step?.threadKey === thread.threadKey ? closeCarriedApprovalsTransition(step, { fence: scope.lease.fence, approvalIds, reason: CLOSED_BY_NEWER_MESSAGE, now: now() }) : undefined;
      if (!transition) {
        // Its step is gone (past its lifetime) or no longer says approved: no card to change, the model is told all the same.
        const closed = { outcome: 'denied' as const, userId: COUNTERSIGN_ACTOR, at: now(), reason: CLOSED_BY_NEWER_MESSAGE };
        thread.messages = withWithdrawals(thread.messages, approvals.map((approval) => ({ approval, told: denialReason(closed) })));
        return { done: undefined };
      }
      // Written as a copy, without the failure (nothing is left for its Try again): a conflict leaves the thread as it was.
      const { failedTurn: _lapsed, ...rest } = thread;
      const messages = withWithdrawals(
        thread.messages,
        approvalIds.flatMap((approvalId) => {
          const decision = transition.step.decisions[approvalId];
          return decision ? [{ approval: { approvalId }, told: denialReason(decision) }] : [];
        }),
      );
      // Gone at the write: read again, and told to the model as above.
      return {
        transition,
        thread: { ...rest, messages },
        whenCommitted: () => {
          thread.messages = messages;
          logger.warn({ event: 'carried-approvals-closed', stepId, approvalIds }, 'a newer message came instead of Try again; approved calls the failed turn never started were closed without running');
          return transition.step;
        },
      };
    };
    return saveWithStepRetrying({ scope, store, stepId, maxAttempts: MAX_ATTEMPTS, writeFor });
  }
}
