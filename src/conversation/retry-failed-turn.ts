import { createCurrentEvaluation } from '../approvals/evaluate-call-policy.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { appendQuietly } from '../audit/audit-log.js';
import type { ThreadState } from '../store/thread-state.js';
import { judgeCarriedApprovals, withWithdrawals, type Withdrawal } from './carried-approvals.js';
import type { CloseInterruptedCalls } from './close-interrupted-calls.js';
import { judgeRetry } from './failed-turn.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { RunAndPublish } from './run-and-publish.js';
import type { LoadThread } from './thread-loader.js';
import type { TurnScope } from './turn-scope.js';
import type { RetryWorkItem } from './work-item.js';

type RetryDependencies = Pick<PhaseDependencies, 'store' | 'audit' | 'logger' | 'now' | 'policy' | 'tools'> & {
  /** `fresh`: past any cache; an approval is checked again with the groups as they are now. */
  resolveGroups: (groupIds: readonly string[], options?: { fresh?: boolean }) => Promise<GroupMembers>;
  loadThread: LoadThread;
  runAndPublish: RunAndPublish;
  closeInterruptedCalls: CloseInterruptedCalls;
};

/**
 * Runs the turn again after a failure, from the stored history, for the requester of the turn
 * that failed (see `judgeRetry`). Only the failure the thread still has can be retried, once.
 * Approved calls the failed turn never started run with the approval they were given, judged again
 * first as at a resume (see `judgeCarriedApprovals`): one that no longer holds is denied, not asked for again.
 */
export function createRetryFailedTurn({ store, audit, logger, now, policy, tools, resolveGroups, loadThread, runAndPublish, closeInterruptedCalls }: RetryDependencies) {
  // Held to the policy in force as well as to the one the card showed, as at a resume.
  const currentEvaluation = createCurrentEvaluation({ policy, tools });
  return async (scope: TurnScope, item: RetryWorkItem): Promise<void> => {
    const thread = await loadThread(item);
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
    const approvals = await judgeCarriedApprovals({ carried: failed?.approvedCalls ?? [], threadKey: thread.threadKey, getStep: (stepId) => store.getStep(stepId), resolveGroups, currentEvaluation, now: now() });
    if (approvals.kind === 'unchecked') {
      // Neither run nor denied on a Slack outage: the failure stays, for a later click.
      logger.warn({ event: 'retry-waits-for-groups', threadKey: thread.threadKey, groupIds: approvals.groupIds }, 'could not read the approving groups; the retry was not started');
      const groups = `the user group${approvals.groupIds.length === 1 ? '' : 's'} ${approvals.groupIds.join(', ')}`;
      const text = `I could not check who is in ${groups} to confirm the approvals just now, so nothing was run. Click Try again in a minute.`;
      return scope.messenger.postEphemeral({ channel: item.channel, userId: item.clickedBy, threadTs: item.threadTs, text });
    }
    thread.messages = withWithdrawals(thread.messages, approvals.withdrawn);
    delete thread.failedTurn;
    // Audited in the save that withdraws them: the history never says "no longer holds" while the trail says only "approved".
    await scope.save(thread, { audit: approvals.withdrawn.map((withdrawal) => withdrawalEvent(thread, withdrawal)) });
    for (const withdrawal of approvals.withdrawn) logWithdrawal(withdrawal);
    await closeInterruptedCalls(scope, thread);
    await runAndPublish(scope, thread, judgement.requesterId, approvals.runs);
  };

  function logWithdrawal({ approval, userId, code }: Withdrawal): void {
    logger.warn({ event: 'approval-withdrawn', stepId: approval.stepId, approvalId: approval.approvalId, userId, code }, 'approval no longer holds at Try again; the call is not run');
  }
}

function withdrawalEvent(thread: ThreadState, { approval, userId, code, reason }: Withdrawal): AuditEventInput {
  return { type: 'action-refused', teamId: thread.teamId, channel: thread.channel, stepId: approval.stepId, approvalId: approval.approvalId, toolName: approval.toolName, userId, action: 'retry', code, reason };
}
