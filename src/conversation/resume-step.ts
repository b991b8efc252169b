import { approvedRunsFor } from '../agent/approved-runs.js';
import { closingToolMessage, resumeToolMessage } from '../agent/decision-messages.js';
import { currentVersion } from '../approvals/input-version.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { recheckApprovals } from '../approvals/recheck-approvals.js';
import { claimResumeTransition } from '../approvals/transitions/close-step.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { appendQuietly } from '../audit/audit-log.js';
import { faultPoint } from '../runtime/fault-points.js';
import { threadKeyOf, type ThreadState } from '../store/thread-state.js';
import { postOutbox } from './answer-outbox.js';
import type { CloseInterruptedCalls } from './close-interrupted-calls.js';
import { addParticipants } from './participants.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { RunAndPublish } from './run-and-publish.js';
import { validatedThread, type LoadThread } from './thread-loader.js';
import type { TurnScope } from './turn-scope.js';

type ResumeDependencies = Pick<PhaseDependencies, 'store' | 'audit' | 'logger' | 'now' | 'resolveGroups'> & {
  loadThread: LoadThread;
  runAndPublish: RunAndPublish;
  closeInterruptedCalls: CloseInterruptedCalls;
};

/** Resuming a turn once its step is decided: claim it (once, under the fence), re-check every approval, tell the model, run. */
export function createStepResumer(options: ResumeDependencies) {
  const { store, logger, now, loadThread, runAndPublish, closeInterruptedCalls } = options;

  async function resume(scope: TurnScope, stepId: string): Promise<void> {
    // The step's thread is the lease's: both are read in one round trip.
    const { threadKey } = scope.lease.fence;
    const read = await store.getStepAndThread(stepId, threadKey);
    const { step } = read;
    if (!step) return;
    const thread = threadKeyOf(step) === threadKey ? validatedThread({ address: step, stored: read.thread, logger, now }) : await loadThread(step);
    if (thread.pendingStepId !== stepId) {
      if (step.phase === 'resumed') await recoverInterruptedResume(scope, thread, step);
      return;
    }
    const claimed = await claimResume(scope, stepId, step);
    if (!claimed) return;
    await resumeClaimed(scope, thread, claimed);
  }

  /** Claims the resume under this lease's fence; `read`: the step as just read, saving a round trip. */
  async function claimResume(scope: TurnScope, stepId: string, read?: PendingStep): Promise<PendingStep | undefined> {
    const claimed = await scope.lease.guard(() =>
      commitTransition(store, stepId, (step) => claimResumeTransition(step, scope.lease.fence), read ? { read } : {}),
    );
    if (claimed) faultPoint('after-claim');
    return claimed;
  }

  /**
   * A process claimed this resume and stopped before finishing it. If the history still ends with
   * the step's decisions, the turn never completed: calls that had started executing are closed as
   * "interrupted" (they may have run; they must not run twice), the others run now.
   */
  async function recoverInterruptedResume(scope: TurnScope, thread: ThreadState, step: PendingStep): Promise<void> {
    if (thread.outbox !== undefined) return postOutbox(scope, thread);
    const last = thread.messages.at(-1);
    const approvalIds = new Set(step.calls.map((call) => call.approvalId));
    const isResumeMessage =
      last?.role === 'tool' && last.content.some((part) => part.type === 'tool-approval-response' && approvalIds.has(part.approvalId));
    if (!isResumeMessage) return;
    await closeInterruptedCalls(scope, thread);
    await runAndPublish(scope, thread, step.requesterId, approvedRunsFor(step));
  }

  async function resumeClaimed(scope: TurnScope, thread: ThreadState, claimed: PendingStep): Promise<void> {
    const { step, revoked } = await recheckApprovals({ step: claimed, resolveGroups: options.resolveGroups, now: now() });
    for (const revocation of revoked) {
      logger.warn({ event: 'approval-revoked', stepId: step.stepId, ...revocation }, 'approval no longer authorized at resume');
      const call = step.calls.find((candidate) => candidate.approvalId === revocation.approvalId);
      await appendQuietly(
        options.audit,
        { type: 'action-refused', teamId: step.teamId, stepId: step.stepId, approvalId: revocation.approvalId, toolName: call?.toolName ?? 'unknown', userId: revocation.userId, action: 'resume', code: 'approval-revoked', reason: revocation.reason },
        logger,
      );
    }
    addParticipants(thread, Object.values(step.decisions).flatMap((decision) => [decision.userId, ...(decision.approvedBy ?? [])]));
    if (stopsOnExpiry(step)) {
      // The policy says an unanswered request ends the turn: nothing runs and the model is not asked.
      thread.messages.push(closingToolMessage(step));
      delete thread.pendingStepId;
      await scope.save(thread, { settled: true });
      await scope.messenger.postNotice({
        channel: thread.channel,
        threadTs: thread.threadTs,
        text: ':alarm_clock: The approval request expired without a decision, so nothing was run. Mention me to try again.',
      });
      return;
    }
    // The model's calls stay in the history exactly as it made them; approved calls run with the
    // version their approvers signed (`approvedRunsFor`), and the result says so.
    thread.messages.push(resumeToolMessage(step));
    delete thread.pendingStepId;
    // Saved before anything runs, so the record of what was decided survives a failed turn.
    await scope.save(thread);
    logger.info({ event: 'turn-resumed', stepId: step.stepId, threadKey: thread.threadKey }, 'resuming turn');
    await runAndPublish(scope, thread, step.requesterId, approvedRunsFor(step));
  }

  return { resume, claimResume, resumeClaimed };
}

export type StepResumer = ReturnType<typeof createStepResumer>;

/** Every call expired unanswered and their rules say expiry ends the turn (`onExpiry: stop`). */
function stopsOnExpiry(step: PendingStep): boolean {
  const outcomes = step.calls.map((call) => ({ call, decision: step.decisions[call.approvalId] }));
  if (!outcomes.some(({ decision }) => decision?.outcome === 'expired')) return false;
  return outcomes.every(({ call, decision }) =>
    decision?.outcome === 'expired' ? ((currentVersion(call)?.policy ?? call.policy)?.onExpiry ?? 'stop') === 'stop' : decision?.outcome !== 'approved' && decision?.outcome !== 'answered',
  );
}
