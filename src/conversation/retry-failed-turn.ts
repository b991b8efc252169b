import { createCurrentEvaluation } from '../approvals/evaluate-call-policy.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { appendQuietly } from '../audit/audit-log.js';
import type { RetriedRun, ThreadState } from '../store/thread-state.js';
import { postOutbox } from './answer-outbox.js';
import { judgeCarriedApprovals, withWithdrawals, type Withdrawal } from './carried-approvals.js';
import type { CloseInterruptedCalls } from './close-interrupted-calls.js';
import { judgeRetry } from './failed-turn.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { RunAndPublish } from './run-and-publish.js';
import type { StepCards } from './step-card.js';
import type { LoadThread } from './thread-loader.js';
import type { TurnScope } from './turn-scope.js';
import type { RetryWorkItem } from './work-item.js';

type RetryDependencies = Pick<PhaseDependencies, 'store' | 'audit' | 'logger' | 'now' | 'policy' | 'tools'> & {
  /** `fresh`: past any cache; an approval is checked again with the groups as they are now. */
  resolveGroups: (groupIds: readonly string[], options?: { fresh?: boolean }) => Promise<GroupMembers>;
  loadThread: LoadThread;
  runAndPublish: RunAndPublish;
  closeInterruptedCalls: CloseInterruptedCalls;
  cards: Pick<StepCards, 'postCardFor'>;
};

/** Enough to recognise a retry item a stopped process left; older failures are long retried. */
const RETRIED_FAILURES_KEPT = 20;

/**
 * Runs the turn again after a failure, from the stored history, for the requester of the turn
 * that failed (see `judgeRetry`). Only the failure the thread still has can be retried, once: a
 * retry a stopped process took in is finished by the process that takes its item over.
 * Approved calls the failed turn never started run with the approval they were given, judged again
 * first as at a resume (see `judgeCarriedApprovals`): one that no longer holds is denied, not asked for again.
 */
export function createRetryFailedTurn({ store, audit, logger, now, policy, tools, resolveGroups, loadThread, runAndPublish, closeInterruptedCalls, cards }: RetryDependencies) {
  // Held to the policy in force as well as to the one the card showed, as at a resume.
  const currentEvaluation = createCurrentEvaluation({ policy, tools });
  return async (scope: TurnScope, item: RetryWorkItem): Promise<void> => {
    const thread = await loadThread(item);
    // Taken in by a process that stopped before showing what came of it: shown now, not retried again.
    if (thread.retriedFailureIds?.includes(item.failureId) && (await showLeftOver(scope, thread))) return;
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
    if (failed?.retrying) return continueRetry(scope, thread, { requesterId: judgement.requesterId, runs: failed.retrying.approvedRuns });
    const approvals = await judgeCarriedApprovals({ carried: failed?.approvedCalls ?? [], threadKey: thread.threadKey, getStep: (stepId) => store.getStep(stepId), resolveGroups, currentEvaluation, now: now() });
    if (approvals.kind === 'unchecked') {
      // Neither run nor denied on a Slack outage: the failure stays, for a later click.
      logger.warn({ event: 'retry-waits-for-groups', threadKey: thread.threadKey, groupIds: approvals.groupIds }, 'could not read the approving groups; the retry was not started');
      const groups = `the user group${approvals.groupIds.length === 1 ? '' : 's'} ${approvals.groupIds.join(', ')}`;
      const text = `I could not check who is in ${groups} to confirm the approvals just now, so nothing was run. Click Try again in a minute.`;
      return scope.messenger.postEphemeral({ channel: item.channel, userId: item.clickedBy, threadTs: item.threadTs, text });
    }
    thread.messages = withWithdrawals(thread.messages, approvals.withdrawn);
    // Taken in, in the save before the model is asked: the failure stays, marked with what was
    // judged, until the retried turn ends, so a process that takes this item over finishes the same turn.
    thread.failedTurn = { ...failed!, retrying: { approvedRuns: [...approvals.runs].map(([toolCallId, run]) => ({ toolCallId, run })) } };
    thread.retriedFailureIds = [...(thread.retriedFailureIds ?? []), failed!.id].slice(-RETRIED_FAILURES_KEPT);
    // Audited in the save that withdraws them: the history never says "no longer holds" while the trail says only "approved".
    await scope.save(thread, { audit: approvals.withdrawn.map((withdrawal) => withdrawalEvent(thread, withdrawal)) });
    for (const withdrawal of approvals.withdrawn) logWithdrawal(withdrawal);
    await closeInterruptedCalls(scope, thread);
    await runAndPublish(scope, thread, judgement.requesterId, approvals.runs);
  };

  /**
   * The retried turn a stopped process left, run again with the runs it was judged to carry, not
   * judged a second time (its withdrawals are in the history already). A carried call whose executing
   * marker was written is closed as interrupted first, so it is never run twice.
   */
  async function continueRetry(scope: TurnScope, thread: ThreadState, { requesterId, runs }: { requesterId: string; runs: readonly RetriedRun[] }): Promise<void> {
    logger.warn({ event: 'retry-continued', threadKey: thread.threadKey }, 'a retried turn was interrupted; continuing it');
    await closeInterruptedCalls(scope, thread);
    await runAndPublish(scope, thread, requesterId, new Map(runs.map(({ toolCallId, run }) => [toolCallId, run])));
  }

  /**
   * What a stopped retry saved but did not show: its answer, or the card its turn asked for. True
   * when there was something; otherwise the retry either ran to its end (a later click finds nothing
   * to retry) or is still to be run again from its failure.
   */
  async function showLeftOver(scope: TurnScope, thread: ThreadState): Promise<boolean> {
    if (thread.outbox !== undefined) {
      await postOutbox(scope, thread);
      return true;
    }
    if (thread.pendingStepId === undefined) return false;
    const step = await store.getStep(thread.pendingStepId);
    if (!step || step.cardTs !== undefined || step.phase !== 'pending') return false;
    await cards.postCardFor(scope, step);
    return true;
  }

  function logWithdrawal({ approval, userId, code }: Withdrawal): void {
    logger.warn({ event: 'approval-withdrawn', stepId: approval.stepId, approvalId: approval.approvalId, userId, code }, 'approval no longer holds at Try again; the call is not run');
  }
}

function withdrawalEvent(thread: ThreadState, { approval, userId, code, reason }: Withdrawal): AuditEventInput {
  return { type: 'action-refused', teamId: thread.teamId, channel: thread.channel, stepId: approval.stepId, approvalId: approval.approvalId, toolName: approval.toolName, userId, action: 'retry', code, reason };
}
