import { approvedRunsAwaiting } from '../agent/approved-runs.js';
import type { ApprovedRun } from '../agent/tool-set.js';
import { createCurrentEvaluation } from '../approvals/evaluate-call-policy.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { appendQuietly } from '../audit/audit-log.js';
import type { FailedTurn, ThreadState } from '../store/thread-state.js';
import { postOutbox } from './answer-outbox.js';
import { judgeCarriedApprovals, withWithdrawals, type Withdrawal } from './carried-approvals.js';
import type { CloseInterruptedCalls } from './close-interrupted-calls.js';
import { judgeRetry, postUnpostedNotice } from './failed-turn.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { RunAndPublish } from './run-and-publish.js';
import type { StepResumer } from './resume-step.js';
import type { StepCards } from './step-card.js';
import type { LoadThread } from './thread-loader.js';
import type { TurnScope } from './turn-scope.js';
import type { RetryWorkItem } from './work-item.js';
import { createWithdrawalsOnSteps } from './withdrawals-on-steps.js';

type RetryDependencies = Pick<PhaseDependencies, 'store' | 'audit' | 'logger' | 'now' | 'policy' | 'tools' | 'approvalHook'> & {
  /** `fresh`: past any cache; an approval is checked again with the groups as they are now. */
  resolveGroups: (groupIds: readonly string[], options?: { fresh?: boolean }) => Promise<GroupMembers>;
  loadThread: LoadThread;
  runAndPublish: RunAndPublish;
  closeInterruptedCalls: CloseInterruptedCalls;
  cards: Pick<StepCards, 'postUnpostedCard'>;
  resumer: Pick<StepResumer, 'finishInlineResume'>;
};

/** Enough to recognise a retry item a stopped process left; older failures are long retried. */
const RETRIED_FAILURES_KEPT = 20;

/**
 * Runs the turn again after a failure, from the stored history, for the requester of the turn
 * that failed (see `judgeRetry`). Only the failure the thread still has can be retried, once: a
 * retry a stopped process took in is finished by the process that takes its item over (or by the
 * next click, when its item failed).
 * Approved calls the failed turn never started run with the approval they were given, judged again
 * first as at a resume (see `judgeCarriedApprovals`), each time the retry is started or continued:
 * one that no longer holds is denied, not asked for again.
 */
export function createRetryFailedTurn({ store, audit, logger, now, policy, tools, approvalHook, resolveGroups, loadThread, runAndPublish, closeInterruptedCalls, cards, resumer }: RetryDependencies) {
  // Held to the policy in force as well as to the one the card showed, as at a resume.
  const currentEvaluation = createCurrentEvaluation({ policy, tools });
  const saveWithdrawals = createWithdrawalsOnSteps({ store, logger, now });
  return async (scope: TurnScope, item: RetryWorkItem): Promise<void> => {
    const thread = await loadThread(item);
    // The retried turn went on to a step the approval hook decided and resumed here: run with its approvals.
    if (await resumer.finishInlineResume(scope, thread)) return;
    // Taken in by a process that stopped before showing what came of it: shown now, not retried again.
    if (thread.retriedFailureIds?.includes(item.failureId) && (await showLeftOver(scope, thread, item))) return;
    const last = thread.messages.at(-1);
    const waitingForModel = thread.pendingStepId === undefined && (last?.role === 'user' || last?.role === 'tool');
    const failed = waitingForModel ? thread.failedTurn : undefined;
    const judgement = judgeRetry(failed, item);
    if (!judgement.allowed) {
      if (judgement.code === 'not-requester') {
        await appendQuietly(audit, { type: 'action-refused', teamId: thread.teamId, channel: thread.channel, userId: item.clickedBy, action: 'retry', code: judgement.code, reason: judgement.message }, logger);
      }
      return scope.messenger.postEphemeral({ channel: item.channel, userId: item.clickedBy, threadTs: item.threadTs, text: judgement.message });
    }
    if (failed!.retrying) return continueRetry(scope, item, thread, { failed: failed!, retrying: failed!.retrying, requesterId: judgement.requesterId });
    const approvals = await judgeCarriedApprovals({ carried: failed!.approvedCalls ?? [], threadKey: thread.threadKey, getStep: (stepId) => store.getStep(stepId), resolveGroups, currentEvaluation, hookInForce: approvalHook?.name, now: now() });
    if (approvals.kind === 'unchecked') return waitForGroups(scope, item, thread, approvals.groupIds);
    // Taken in, in the save before the model is asked: the failure stays, marked with what was
    // judged, until the retried turn ends, so a process that takes this item over finishes the same turn.
    await takeIn(scope, thread, { failed: failed!, approvals });
    await closeInterruptedCalls(scope, thread);
    await runAndPublish(scope, thread, judgement.requesterId, approvals.runs);
  };

  /**
   * The retried turn a stopped process left, or one whose item failed after it was taken in (then
   * this may be a click days later), run again. A carried call whose executing marker was written is
   * closed as interrupted first, so it is never run twice. The approvals still to run are judged
   * again as at the first click: an approver may have left the group or the rule may have changed
   * since, and a call must not run on a judgement that no longer holds. Approvals withdrawn before
   * are in the history already and not judged (nor audited) again.
   */
  async function continueRetry(
    scope: TurnScope,
    item: RetryWorkItem,
    thread: ThreadState,
    { failed, retrying, requesterId }: { failed: FailedTurn; retrying: NonNullable<FailedTurn['retrying']>; requesterId: string },
  ): Promise<void> {
    logger.warn({ event: 'retry-continued', threadKey: thread.threadKey }, 'a retried turn was interrupted; continuing it');
    await closeInterruptedCalls(scope, thread);
    const taken = new Map(retrying.approvedRuns.map(({ toolCallId, run }) => [toolCallId, run]));
    const awaiting = approvedRunsAwaiting({ runs: taken, messages: thread.messages });
    const carried = (failed.approvedCalls ?? []).filter((approval) => awaiting.has(approval.toolCallId));
    const approvals = await judgeCarriedApprovals({ carried, threadKey: thread.threadKey, getStep: (stepId) => store.getStep(stepId), resolveGroups, currentEvaluation, hookInForce: approvalHook?.name, now: now() });
    if (approvals.kind === 'unchecked') return waitForGroups(scope, item, thread, approvals.groupIds);
    await takeIn(scope, thread, { failed, approvals });
    await runAndPublish(scope, thread, requesterId, approvals.runs);
  }

  /**
   * Saves the retry as taken in: approvals that no longer hold turned into denials, audited in the
   * same save (the history never says "no longer holds" while the trail says only "approved") and
   * closed on their steps, whose cards then say so (`saveWithdrawals`), and the failure kept,
   * marked with the runs judged to hold, until the retried turn ends.
   */
  async function takeIn(scope: TurnScope, thread: ThreadState, { failed, approvals }: { failed: FailedTurn; approvals: { runs: ReadonlyMap<string, ApprovedRun>; withdrawn: readonly Withdrawal[] } }): Promise<void> {
    thread.messages = withWithdrawals(thread.messages, approvals.withdrawn);
    thread.failedTurn = { ...failed, retrying: { approvedRuns: [...approvals.runs].map(([toolCallId, run]) => ({ toolCallId, run })) } };
    // An answer still saved is an earlier turn's: `showLeftOver` must not take it for this retry's.
    delete thread.outbox;
    const retried = (thread.retriedFailureIds ?? []).filter((id) => id !== failed.id);
    thread.retriedFailureIds = [...retried, failed.id].slice(-RETRIED_FAILURES_KEPT);
    await saveWithdrawals(scope, thread, { withdrawn: approvals.withdrawn, audit: approvals.withdrawn.map((withdrawal) => withdrawalEvent(thread, withdrawal)) });
    for (const withdrawal of approvals.withdrawn) logWithdrawal(withdrawal);
  }

  /** Neither run nor denied on a Slack outage: the failure stays (taken in or not), for a later click. */
  async function waitForGroups(scope: TurnScope, item: RetryWorkItem, thread: ThreadState, groupIds: readonly string[]): Promise<void> {
    logger.warn({ event: 'retry-waits-for-groups', threadKey: thread.threadKey, groupIds }, 'could not read the approving groups; the retry was not started');
    const groups = `the user group${groupIds.length === 1 ? '' : 's'} ${groupIds.join(', ')}`;
    const text = `I could not check who is in ${groups} to confirm the approvals just now, so nothing was run. Click Try again in a minute.`;
    return scope.messenger.postEphemeral({ channel: item.channel, userId: item.clickedBy, threadTs: item.threadTs, text });
  }

  /**
   * What a stopped retry saved but did not show: the notice of its turn failing again, its answer, or
   * the card its turn asked for. True when there was something; otherwise the retry either ran to its
   * end (a later click finds nothing to retry) or is still to be run again from its failure.
   */
  async function showLeftOver(scope: TurnScope, thread: ThreadState, item: RetryWorkItem): Promise<boolean> {
    if (thread.failedTurn?.retryOf === item.failureId && (await postUnpostedNotice(scope, thread))) return true;
    if (thread.outbox !== undefined) {
      await postOutbox(scope, thread);
      return true;
    }
    return cards.postUnpostedCard(scope, thread);
  }

  function logWithdrawal({ approval, userId, code }: Withdrawal): void {
    logger.warn({ event: 'approval-withdrawn', stepId: approval.stepId, approvalId: approval.approvalId, userId, code }, 'approval no longer holds at Try again; the call is not run');
  }
}

function withdrawalEvent(thread: ThreadState, { approval, userId, code, reason }: Withdrawal): AuditEventInput {
  return { type: 'action-refused', teamId: thread.teamId, channel: thread.channel, stepId: approval.stepId, approvalId: approval.approvalId, toolName: approval.toolName, userId, action: 'retry', code, reason };
}
