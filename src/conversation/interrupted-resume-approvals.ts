import { approvedRunsAwaiting, approvedRunsFor } from '../agent/approved-runs.js';
import { denialReason } from '../agent/decision-messages.js';
import { closeStaleApprovals, staleApprovalEvent } from '../agent/stale-approvals.js';
import type { ApprovedRun } from '../agent/tool-set.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import type { CurrentEvaluation } from '../approvals/policy/governing-policy.js';
import { recheckApprovals, revocationEvent } from '../approvals/recheck-approvals.js';
import { rejudgeResumeTransition } from '../approvals/transitions/close-step.js';
import type { ThreadState } from '../store/thread-state.js';
import { carriedApprovals, withWithdrawals } from './carried-approvals.js';
import { newFailedTurn, postFailureNotice } from './failed-turn.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { refreshCard } from './refresh-card.js';
import { saveWithStepRetrying } from './save-with-step-retrying.js';
import type { TurnScope } from './turn-scope.js';
import { groupNames } from './unchecked-approvals.js';

/** A resumed step is written only by holders of its thread, and this one holds it: a conflict is all but impossible. */
const MAX_ATTEMPTS = 5;

type Dependencies = Pick<PhaseDependencies, 'store' | 'logger' | 'now' | 'tools' | 'resolveGroups'> & {
  currentEvaluation: CurrentEvaluation;
  /** The `onApprovalRequest` hook this process runs with: a hook's approval holds only while it is in force. */
  hookInForce: string | undefined;
};

/**
 * A resume its process claimed and stopped before running (a deploy killed it, say), finished by
 * another process, perhaps of a new release: the approvals of the calls that never started are
 * judged again under the config in force, as the claim judged them (`recheckApprovals`,
 * `closeStaleApprovals`) and as Try again judges the same approvals. A deploy may have removed the
 * hook that approved a call, forbidden automatic approval or raised the quorum meanwhile. What no
 * longer holds is closed on the step (the card says "Not run" and why), answered "not run" in the
 * history as Try again answers it (`withWithdrawals`), and audited, all in one write; the runs
 * returned are what still holds. Calls that started are not judged: `closeInterruptedCalls` has
 * answered them "interrupted" already, and they never run again.
 *
 * Undefined when nothing is to run now: Slack did not answer for an approving group, and, as Try
 * again does then, nothing is run or denied; the turn is left failed, with Try again, which judges
 * the approvals again when clicked.
 */
export function createInterruptedResumeJudge({ store, logger, now, tools, resolveGroups, currentEvaluation, hookInForce }: Dependencies) {
  return async function rejudgeInterruptedResume(scope: TurnScope, thread: ThreadState, read: PendingStep): Promise<ReadonlyMap<string, ApprovedRun> | undefined> {
    return saveWithStepRetrying<ReadonlyMap<string, ApprovedRun> | undefined>({
      scope,
      store,
      stepId: read.stepId,
      stepAsRead: read,
      maxAttempts: MAX_ATTEMPTS,
      writeFor: async (step) => {
        if (!step) return { done: notOnRecord(read) };
        const awaiting = approvedRunsAwaiting({ runs: approvedRunsFor(step), messages: thread.messages });
        if (awaiting.size === 0) return { done: awaiting };
        // Only the calls still to run: the step's others ran, were denied, or were interrupted.
        const judging = { ...step, calls: step.calls.filter((call) => awaiting.has(call.toolCallId)) };
        const recheck = await recheckApprovals({ step: judging, resolveGroups, currentEvaluation, hookInForce, now: now() });
        if (recheck.unchecked.length > 0) {
          await leaveForTryAgain(scope, thread, { step, awaiting, groupNames: groupNames(recheck.unchecked) });
          return { done: undefined };
        }
        const { step: checked, stale } = await closeStaleApprovals({ step: recheck.step, tools, at: now() });
        const closed = [...recheck.revoked.map(({ approvalId }) => approvalId), ...stale.map(({ approvalId }) => approvalId)];
        if (closed.length === 0) return { done: awaiting };
        const decisions: Record<string, Decision> = Object.fromEntries(closed.map((approvalId) => [approvalId, checked.decisions[approvalId]!]));
        const transition = rejudgeResumeTransition(step, { fence: scope.lease.fence, decisions });
        // No longer resumed (nothing else moves a resumed step): nothing of it is run.
        if (!transition) return { done: undefined };
        const audit = [...recheck.revoked.map((revocation) => revocationEvent(step, revocation)), ...stale.map((approval) => staleApprovalEvent(step, approval))];
        // Written as a copy: a conflict leaves the thread as it was, for the next round.
        const messages = withWithdrawals(
          thread.messages,
          closed.map((approvalId) => ({ approval: { approvalId }, told: denialReason(decisions[approvalId]!) })),
        );
        return {
          transition: { ...transition, audit },
          thread: { ...thread, messages },
          whenGone: () => notOnRecord(step),
          whenCommitted: async () => {
            thread.messages = messages;
            for (const revocation of recheck.revoked) logger.warn({ event: 'approval-revoked', stepId: step.stepId, ...revocation }, 'approval no longer authorized when the interrupted resume was recovered');
            for (const approval of stale) logger.warn({ event: 'approval-stale', stepId: step.stepId, approvalId: approval.approvalId, code: approval.code }, 'the approved tool was removed or changed since the approval; the call was closed without running');
            // The card said "Approved by …": it now says what became of the call.
            await refreshCard({ scope, step: transition.step, logger, store, now });
            return approvedRunsAwaiting({ runs: approvedRunsFor(transition.step), messages: thread.messages });
          },
        };
      },
    });
  };

  /** Gone past its lifetime since it was read: nothing it approved can be checked, so nothing runs. */
  function notOnRecord(step: PendingStep): undefined {
    logger.warn({ event: 'resume-recovery-step-gone', stepId: step.stepId }, 'the step of an interrupted resume is no longer stored; its approved calls are not run');
    return undefined;
  }

  /**
   * Neither run nor denied on a Slack outage, as Try again leaves it: the turn is saved as failed,
   * carrying the approvals of the calls still to run, and its notice offers Try again, which judges
   * them again (groups read fresh) when clicked.
   */
  async function leaveForTryAgain(scope: TurnScope, thread: ThreadState, { step, awaiting, groupNames: groups }: { step: PendingStep; awaiting: ReadonlyMap<string, ApprovedRun>; groupNames: string }): Promise<void> {
    logger.warn({ event: 'resume-recovery-waits-for-groups', stepId: step.stepId, threadKey: thread.threadKey }, 'could not read the approving groups; the interrupted resume was not run');
    const notice = `:warning: Sorry, I could not finish this: I could not check who is in ${groups} to confirm the approvals, so nothing was run. Click *Try again* in a minute.`;
    thread.failedTurn = newFailedTurn({ requesterId: step.requesterId, at: now(), notice, approvedCalls: carriedApprovals(awaiting) });
    await scope.save(thread);
    await postFailureNotice(scope, thread, { text: notice });
  }
}
