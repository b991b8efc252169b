import { approvedRunsFor } from '../agent/approved-runs.js';
import { closeStaleApprovals, staleApprovalEvent } from '../agent/stale-approvals.js';
import { closedAtClaim, closingToolMessage, COUNTERSIGN_ACTOR, resumeToolMessage } from '../agent/decision-messages.js';
import { resumedTurnUnfinished } from '../agent/unfinished-resume.js';
import { createCurrentEvaluation } from '../approvals/evaluate-call-policy.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import { recheckApprovals, revocationEvent, type UncheckedApproval } from '../approvals/recheck-approvals.js';
import { claimResumeTransition } from '../approvals/transitions/close-step.js';
import { StepContendedError } from '../approvals/transitions/commit-transition.js';
import { turnInstigators } from '../approvals/turn-instigators.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { faultPoint } from '../runtime/fault-points.js';
import type { PrefetchedStep } from '../store/state-store.js';
import { threadKeyOf, type ThreadState } from '../store/thread-state.js';
import { postOutbox } from './answer-outbox.js';
import type { CloseInterruptedCalls } from './close-interrupted-calls.js';
import { postStopNotice, stoppedOnExpiryText, stopsOnExpiry } from './expiry-stop.js';
import { postUnpostedNotice } from './failed-turn.js';
import { createInterruptedResumeJudge } from './interrupted-resume-approvals.js';
import { closeLostThreadResume, threadLoss } from './lost-thread.js';
import { addParticipants } from './participants.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { RunAndPublish, TurnSoFar } from './run-and-publish.js';
import type { StepCards } from './step-card.js';
import { sweepShowsLater } from './card-after-write.js';
import { validatedThread, type LoadThread } from './thread-loader.js';
import { refreshCard as refreshStepCard } from './refresh-card.js';
import type { TurnScope } from './turn-scope.js';
import { resumeItemKey } from './work-item.js';
import { closeUncheckedApprovals, decidedAt, GROUP_RECHECK_SPACING_MS, patienceRanOut, recheckSlot, UNCHECKED_APPROVAL_PATIENCE_MS, WAIT_NOTICE_AFTER_MS, waitNoticeText } from './unchecked-approvals.js';

/** A decided step changes rarely (a re-claim after a stall): conflicts resolve within a few rounds. */
const MAX_CLAIM_ATTEMPTS = 25;

type ResumeDependencies = Pick<PhaseDependencies, 'store' | 'audit' | 'logger' | 'now' | 'policy' | 'tools' | 'approvalHook'> & {
  /** `fresh`: past any cache (the bot's reader has one); a reader without a cache may ignore it. */
  resolveGroups: (groupIds: readonly string[], options?: { fresh?: boolean }) => Promise<GroupMembers>;
  loadThread: LoadThread;
  runAndPublish: RunAndPublish;
  closeInterruptedCalls: CloseInterruptedCalls;
  cards: Pick<StepCards, 'postUnpostedCard'>;
};

/** Resuming a turn once its step is decided: claim it (once, under the fence), re-check every approval, tell the model, run. */
export function createStepResumer(options: ResumeDependencies) {
  const { store, logger, now, loadThread, runAndPublish, closeInterruptedCalls, cards } = options;
  const currentEvaluation = createCurrentEvaluation({ policy: options.policy, tools: options.tools });
  const rejudgeInterruptedResume = createInterruptedResumeJudge({ ...options, currentEvaluation, hookInForce: options.approvalHook?.name });

  /**
   * `prefetched`: the step and thread as the pick-up read them under this lease's lock. `soFar`: the
   * turn this resume goes on with, when its step was decided as it was opened (see `TurnSoFar`).
   */
  async function resume(scope: TurnScope, stepId: string, prefetched?: PrefetchedStep, soFar?: TurnSoFar): Promise<void> {
    // The step's thread is the lease's: both are read in one round trip, or were read with the lock.
    const { threadKey } = scope.lease.fence;
    const read = prefetched?.stepId === stepId ? prefetched : await store.getStepAndThread(stepId, threadKey);
    const { step } = read;
    if (!step) return;
    const ownThread = threadKeyOf(step) === threadKey;
    const thread = ownThread ? validatedThread({ address: step, stored: read.thread, logger, now }) : await loadThread(step);
    // Redis evicted or flushed the thread while its card waited, or its history no longer validates: there is no turn to go on with.
    const loss = ownThread && step.phase === 'complete' ? threadLoss(read.thread, thread, stepId) : undefined;
    if (loss) {
      await closeLostThreadResume({ scope, step, thread, loss, store, logger, now });
      return;
    }
    if (thread.pendingStepId !== stepId) {
      // This step's resumed turn went on to a step the approval hook decided, resumed in this item.
      if (await finishInlineResume(scope, thread)) return;
      if (step.phase === 'resumed') await recoverInterruptedResume(scope, thread, step);
      return;
    }
    await claimAndResume(scope, thread, stepId, step, { waitForGroups: true, ...(soFar ? { soFar } : {}) });
  }

  /**
   * Claims the resume of a decided step under this lease's fence and records in the thread what
   * was decided, in one atomic write (re-checking every approval first), then runs the turn. On a
   * conflict (the step changed since it was read) it starts again from the step as it is now.
   * `read`: the step as just read. False when there was nothing to claim, or when it waits.
   *
   * An approval whose approving group Slack did not answer for is neither run nor denied. With
   * `waitForGroups` (the step's own resume) the step is left decided and unclaimed, and the
   * recovery sweep offers it again until the groups are read or `UNCHECKED_APPROVAL_PATIENCE_MS`
   * has passed; then, or at once without it (a newer message moves the thread on), the call is
   * closed by countersign as an error.
   *
   * `soFar`: the turn the resumed round belongs to (see `TurnSoFar`); without it, the resume starts
   * a turn of its own, with all of `agent.maxSteps`, as after any decision people made.
   */
  async function claimAndResume(scope: TurnScope, thread: ThreadState, stepId: string, read?: PendingStep, { waitForGroups = false, soFar }: { waitForGroups?: boolean; soFar?: TurnSoFar } = {}): Promise<boolean> {
    let known = read;
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt += 1) {
      const step = known ?? (await store.getStep(stepId));
      known = undefined;
      const transition = step && claimResumeTransition(step, scope.lease.fence);
      if (!transition) return false;
      let readSkipped = false;
      const recheck = await recheckApprovals({
        step: transition.step,
        resolveGroups: waitForGroups
          ? async (groupIds, readOptions) => {
              if (await mayReadGroups(transition.step)) return options.resolveGroups(groupIds, readOptions);
              readSkipped = true;
              return new Map();
            }
          : options.resolveGroups,
        currentEvaluation,
        hookInForce: options.approvalHook?.name,
        now: now(),
      });
      const { revoked, unchecked } = recheck;
      if (unchecked.length > 0 && waitForGroups && (readSkipped || !patienceRanOut({ step: transition.step, now: now() }))) {
        await waitForGroupsToBeRead(scope, thread, transition.step, { unchecked, readSkipped });
        return false;
      }
      const checked = unchecked.length === 0 ? recheck.step : closeUncheckedApprovals({ step: recheck.step, unchecked, at: now() });
      // A tool a deploy removed or changed since the approval: closed here, so the card says so too.
      const { step: claimed, stale } = await closeStaleApprovals({ step: checked, tools: options.tools, at: now() });
      const changed = claimed !== transition.step;
      // Written as a copy: a conflict leaves the thread as it was, for the next round.
      const { next, stops } = withDecisions(thread, claimed);
      // Claimed inside another item: whoever takes that item over finishes this turn (`finishInlineResume`).
      if (scope.itemKey !== undefined && scope.itemKey !== resumeItemKey(stepId)) next.inlineResume = { stepId, in: scope.itemKey };
      // Audited in the claim itself: a claim that turned an approval into a denial never stands without saying why.
      const audit = [
        ...revoked.map((revocation) => revocationEvent(claimed, revocation)),
        ...unchecked.map((approval) => uncheckedEvent(claimed, approval)),
        ...stale.map((approval) => staleApprovalEvent(claimed, approval)),
      ];
      const result = await scope.saveWithStep({ ...transition, step: claimed, audit }, next, { settled: stops });
      if (result === 'not-found') return false;
      if (result !== 'committed') continue;
      Object.assign(thread, next);
      delete thread.pendingStepId;
      for (const revocation of revoked) logger.warn({ event: 'approval-revoked', stepId: claimed.stepId, ...revocation }, 'approval no longer authorized at resume');
      for (const approval of unchecked) logger.warn({ event: 'approval-unchecked', stepId: claimed.stepId, ...approval }, 'approving groups could not be read; the call was closed without running');
      for (const approval of stale) logger.warn({ event: 'approval-stale', stepId: claimed.stepId, approvalId: approval.approvalId, code: approval.code }, 'the approved tool was removed or changed since the approval; the call was closed without running');
      faultPoint('after-claim');
      // The card said "Approved by …": it now says what became of the call. A resume taken over
      // (`Lease.recovered`: by the recovery sweep, or by whatever next took the lock the dead
      // holder left it in flight under) is drawn unchanged too: the process that recorded the
      // decision queued this resume (and took the thread's lock) in the same write, and may have
      // stopped before drawing it, leaving "waiting" and live buttons on calls about to run. The
      // usual resume draws nothing more: the decision's own process drew it before draining
      // (`CallDecider.publish`).
      if (changed || scope.lease.recovered) await refreshCard(scope, claimed);
      // The decision's own draw ("Approved by …" of a call closed here) reads nothing after it
      // (`mayChangeUnseen`): from another process, it may still be on its way and land over this one.
      if (changed) await sweepShowsLater({ store, stepId: claimed.stepId, logger, now });
      if (stops) {
        await postStopNotice(scope, thread);
        return true;
      }
      logger.info({ event: 'turn-resumed', stepId: claimed.stepId, threadKey: thread.threadKey }, 'resuming turn');
      await runAndPublish(scope, thread, claimed.requesterId, approvedRunsFor(claimed), soFar);
      return true;
    }
    throw new StepContendedError({ stepId, attempts: MAX_CLAIM_ATTEMPTS });
  }

  /** The thread with what the model is told of the decisions; `stops` when the policy says expiry ends the turn. */
  function withDecisions(thread: ThreadState, step: PendingStep): { next: ThreadState; stops: boolean } {
    // An answer still saved is an earlier turn's: recovering this resume must not post it. An
    // earlier inline resume's turn is over too: this claim's own note, if any, replaces it.
    // An earlier stopped turn's notice still unposted is over too.
    const { pendingStepId: _answered, outbox: _earlier, inlineResume: _finished, unpostedStopNotice: _stopped, ...rest } = thread;
    const stops = stopsOnExpiry(step);
    // Stopping: nothing runs and the model is not asked. Otherwise the model's calls stay in the
    // history exactly as it made them; approved calls run with the version their approvers signed
    // (`approvedRunsFor`), and the result says so.
    const next: ThreadState = { ...rest, messages: [...thread.messages, stops ? closingToolMessage(step) : resumeToolMessage(step)] };
    // Its notice is to be posted, saved in the claim: a process taking the resume over after a stall posts it.
    if (stops) next.unpostedStopNotice = stoppedOnExpiryText(step);
    addParticipants(next, Object.values(step.decisions).flatMap((decision) => [decision.userId, ...(decision.approvedBy ?? [])]));
    // The rest of the turn goes on from these answers and deny reasons: the calls it asks for next record who gave them.
    const instigatorIds = [...new Set([...(thread.instigatorIds ?? []), ...turnInstigators(step)])];
    if (instigatorIds.length > 0) next.instigatorIds = instigatorIds;
    return { next, stops };
  }

  /**
   * Whether this attempt may read the groups: one read per step per `GROUP_RECHECK_SPACING_MS`
   * across every replica, whoever's sweep offered the resume. The claim costs a round trip only
   * for steps whose approvals name a group and only in the wait, since recheck asks for none otherwise.
   */
  async function mayReadGroups(step: PendingStep): Promise<boolean> {
    const slot = recheckSlot({ step, now: now() });
    return store.claimOnce([`group-recheck:${step.stepId}:${slot}`], UNCHECKED_APPROVAL_PATIENCE_MS + 2 * GROUP_RECHECK_SPACING_MS);
  }

  /** Leaves the step decided and unresumed, for the recovery sweep to offer again; the thread hears once if it takes long. */
  async function waitForGroupsToBeRead(scope: TurnScope, thread: ThreadState, step: PendingStep, { unchecked, readSkipped }: { unchecked: UncheckedApproval[]; readSkipped: boolean }): Promise<void> {
    // Logged for the attempts that asked Slack, not for each sweep that found the read already done.
    if (!readSkipped) {
      logger.warn({ event: 'resume-waits-for-groups', stepId: step.stepId, groupIds: unchecked.flatMap((approval) => approval.groupIds) }, 'could not read the approving groups; the resume is tried again');
    }
    if (now() - decidedAt(step) < WAIT_NOTICE_AFTER_MS) return;
    if (!(await store.claimOnce([`group-recheck-notice:${step.stepId}`], UNCHECKED_APPROVAL_PATIENCE_MS * 2))) return;
    await scope.messenger.postNotice({ channel: thread.channel, threadTs: thread.threadTs, text: waitNoticeText(unchecked) });
  }

  const refreshCard = (scope: TurnScope, step: PendingStep) => refreshStepCard({ scope, step, logger, store, now });

  /**
   * The claim closes an approval that no longer holds (revoked, its groups unread, its tool changed)
   * in its atomic write but updates the card only after it: a process that stopped in between left
   * the card saying "Approved by …" of a call that will not run. Recovery shows the step as stored
   * when countersign closed any of its calls (the same update again if the claim had made it); a
   * step whose approvals all held is left as it is.
   */
  async function showClosedCalls(scope: TurnScope, step: PendingStep): Promise<void> {
    if (Object.values(step.decisions).some((decision) => decision.userId === COUNTERSIGN_ACTOR)) await refreshCard(scope, step);
  }

  /**
   * A process claimed this resume and stopped before finishing it, perhaps before the claim's card
   * update (`showClosedCalls`). A claim that ended the turn (expiry, `onExpiry: stop`) leaves at
   * most its notice to post. If nothing follows the step's decisions in the history but what an
   * earlier recovery, interrupted too, recorded of the calls a stopped process started
   * (`resumedTurnUnfinished`), the turn never completed: calls that had started executing are
   * closed as "interrupted" (they may have run; they must not run twice), the others run now if their
   * approvals still hold under the config in force (`rejudgeInterruptedResume`). A resumed turn
   * that failed was not interrupted: the thread shows its failure (its notice is posted if the
   * process stopped first), and only Try again runs it again. A turn that went on to open a new
   * step may have stopped before that step's card was posted. True when something was left to
   * finish (an answer, a notice or a card to show, the turn to run).
   */
  async function recoverInterruptedResume(scope: TurnScope, thread: ThreadState, step: PendingStep): Promise<boolean> {
    // The claim ended the turn (expiry, `onExpiry: stop`) and the process stopped before the notice was posted.
    if (thread.unpostedStopNotice !== undefined) {
      await showClosedCalls(scope, step);
      return postStopNotice(scope, thread);
    }
    if (thread.outbox !== undefined) {
      await postOutbox(scope, thread);
      return true;
    }
    if (thread.failedTurn !== undefined) return postUnpostedNotice(scope, thread);
    if (thread.pendingStepId !== undefined) return cards.postUnpostedCard(scope, thread);
    // Its history ends with the calls closed (`closingToolMessage`), which reads as a resume: the
    // policy ended this turn at its claim, so the model is never asked to go on with it. Judged by
    // what the claim wrote, not by the step: a recovery that revoked an approval since may make the
    // step read as stopped by expiry, although its claim let the turn go on.
    if (closedAtClaim(step, thread.messages)) return false;
    if (!resumedTurnUnfinished(step, thread.messages)) return false;
    await showClosedCalls(scope, step);
    await closeInterruptedCalls(scope, thread);
    // Judged again, as the claim did: the config in force may have changed since (a deploy killed the claim's process).
    const runs = await rejudgeInterruptedResume(scope, thread, step);
    if (runs !== undefined) await runAndPublish(scope, thread, step.requesterId, runs);
    return true;
  }

  /**
   * The item `scope` runs claimed another step's resume (`ThreadState.inlineResume`) and its
   * process stopped: that resumed turn is finished first, as the step's own resume item would
   * finish it (`recoverInterruptedResume`), before the item goes on with its own recovery. That
   * item, if there is one (the hook queues none), finds the step resumed and the history moved on;
   * and the item's own recovery would run the history without the approvals, so the model would
   * be told the approved calls were not run. True when that turn had something left to finish;
   * otherwise the item's own recovery goes on as without it.
   */
  async function finishInlineResume(scope: TurnScope, thread: ThreadState): Promise<boolean> {
    const inline = thread.inlineResume;
    if (inline === undefined || inline.in !== scope.itemKey) return false;
    const step = await store.getStep(inline.stepId);
    if (step?.phase !== 'resumed') return false;
    return recoverInterruptedResume(scope, thread, step);
  }

  return { resume, claimAndResume, finishInlineResume };
}

export type StepResumer = ReturnType<typeof createStepResumer>;

/** Closed by countersign, not by an approver: the audit trail names no person for it. */
function uncheckedEvent(step: PendingStep, approval: UncheckedApproval): AuditEventInput {
  const reason = step.decisions[approval.approvalId]?.reason ?? 'could not check the approving groups';
  const call = step.calls.find((candidate) => candidate.approvalId === approval.approvalId);
  return { type: 'action-refused', teamId: step.teamId, channel: step.channel, stepId: step.stepId, approvalId: approval.approvalId, toolName: call?.toolName ?? 'unknown', userId: COUNTERSIGN_ACTOR, action: 'resume', code: 'groups-unresolved', reason };
}
