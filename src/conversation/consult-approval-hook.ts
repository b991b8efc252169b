import { hookActor, readHookDecision, type ApprovalHook, type ApprovalHookRequest } from '../approvals/approval-hook.js';
import { currentVersion } from '../approvals/input-version.js';
import { isQuestion, type InputVersion, type PendingCall, type PendingStep } from '../approvals/pending-step.js';
import type { CurrentEvaluation } from '../approvals/policy/governing-policy.js';
import {
  hookDecisionRefusal,
  hookDecisionTransition,
  hookFinishedTransition,
  hookMayApprove,
  hookStartedTransition,
  type HookDecisionRefusal,
  type HookVerdict,
} from '../approvals/transitions/hook-decision.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { logUnconfirmedWithdrawal } from '../approvals/unconfirmed-withdrawal.js';
import { appendQuietly } from '../audit/audit-log.js';
import { isFencedError } from '../store/fenced-error.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

/** How long after the hook's time limit its last answer may take to be written. */
const HOOK_RECORD_GRACE_MS = 2_000;

/** A verdict the store refused as past its `deadline` (see `commitVerdict`). */
const PAST_DEADLINE: HookDecisionRefusal = { code: 'expired', reason: "the request expired before the hook decided, by the store's clock (the one every replica shares)" };

type HookDependencies = Pick<PhaseDependencies, 'store' | 'audit' | 'logger' | 'now' | 'metrics' | 'approvalHook'> & {
  /**
   * The config in force's evaluation of a call's input: its expiry governs the hook's verdict as it
   * does a click (`governingExpiry`). Absent: the step's stored deadline alone, as for a config that never changed.
   */
  currentEvaluation?: CurrentEvaluation;
};

/**
 * Asks the `onApprovalRequest` hook about each call of a step that was just opened, before its card
 * is posted: once per call, all calls at once, each within the hook's time limit. A decision is
 * committed like a person's (fenced, over the step's revision, with its audit record), and an
 * approval only for the version the hook was shown; a hook that throws, times out or answers
 * something unreadable leaves the call to people, and the error is logged. Returns the step as it
 * stands afterwards.
 */
export function createApprovalHookConsultation(options: HookDependencies) {
  const { store, logger, now, approvalHook: hook } = options;

  /** What the hook answered about `asked`, the call's version it is shown, within `timeLimitMs`. */
  async function verdictFor(step: PendingStep, call: PendingCall, asked: InputVersion, active: ApprovalHook, timeLimitMs: number): Promise<HookVerdict | undefined> {
    const { policy } = asked;
    const controller = new AbortController();
    const request: ApprovalHookRequest = structuredClone({
      toolName: call.toolName,
      input: asked.input,
      rule: policy.rule,
      policy,
      requesterId: step.requesterId,
      teamId: step.teamId,
      channel: step.channel,
      threadTs: step.threadTs,
      stepId: step.stepId,
      approvalId: call.approvalId,
    }) as Omit<ApprovalHookRequest, 'signal'> as ApprovalHookRequest;
    request.signal = controller.signal;
    const where = { event: 'approval-hook', hook: active.name, stepId: step.stepId, toolName: call.toolName };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed-out'>((resolve) => {
      timer = setTimeout(() => resolve('timed-out'), timeLimitMs);
    });
    try {
      const answer = await Promise.race([Promise.resolve().then(() => active.decide(request)), timedOut]);
      if (answer === 'timed-out') {
        controller.abort(new Error(`onApprovalRequest hook ${active.name} timed out after ${timeLimitMs} ms`));
        logger.error({ ...where, timeoutMs: timeLimitMs }, 'approval hook timed out; the call waits for people');
        return undefined;
      }
      const verdict = readHookDecision(answer);
      if (verdict === 'malformed') {
        logger.error(where, "approval hook returned neither { decision: 'approve' }, { decision: 'deny', reason } nor undefined; the call waits for people");
        return undefined;
      }
      return verdict;
    } catch (error) {
      logger.error({ ...where, err: error }, 'approval hook failed; the call waits for people');
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A hook approval the call's rule does not allow: refused, on the record, and left to people. */
  async function refuseApproval(step: PendingStep, call: PendingCall, active: ApprovalHook): Promise<void> {
    const reason = 'the policy rule forbids automatic approval of this tool, so people decide';
    logger.warn({ event: 'approval-hook-refused', hook: active.name, stepId: step.stepId, toolName: call.toolName }, reason);
    await appendQuietly(
      options.audit,
      { type: 'action-refused', teamId: step.teamId, channel: step.channel, stepId: step.stepId, approvalId: call.approvalId, toolName: call.toolName, userId: hookActor(active.name), action: 'approve', code: 'auto-approve-forbidden', reason },
      logger,
    );
  }

  /**
   * A decision the hook made that could not count, because the step moved on while it decided (a
   * click after the mark's deadline, a newer message, expiry): said in the log and the audit trail,
   * never dropped silently, since what the hook decided (a veto, say) did not happen.
   */
  async function recordNotCounted(step: PendingStep, call: PendingCall, active: ApprovalHook, verdict: HookVerdict, notCounted: HookDecisionRefusal): Promise<void> {
    const reason = `the approval hook's ${verdict.decision === 'deny' ? `deny (${verdict.reason})` : 'approval'} came too late: ${notCounted.reason}`;
    logger.warn({ event: 'approval-hook-not-counted', hook: active.name, stepId: step.stepId, toolName: call.toolName, decision: verdict.decision, code: notCounted.code }, reason);
    await appendQuietly(
      options.audit,
      { type: 'action-refused', teamId: step.teamId, channel: step.channel, stepId: step.stepId, approvalId: call.approvalId, toolName: call.toolName, userId: hookActor(active.name), action: verdict.decision, code: notCounted.code, reason },
      logger,
    );
  }

  /**
   * Commits one verdict on the version the hook was asked about (`asked`); `finished` when it is
   * the hook's last write on the step. Undefined when nothing was written. The deadline is the one a
   * click's would be: the step's, or the earlier one the config in force sets for the asked input.
   */
  async function commitVerdict(
    scope: TurnScope,
    step: PendingStep,
    { call, asked, verdict }: { call: PendingCall; asked: InputVersion; verdict: HookVerdict },
    active: ApprovalHook,
    finished: boolean,
  ): Promise<PendingStep | undefined> {
    let notCounted: HookDecisionRefusal | undefined;
    const currentPolicy = await options.currentEvaluation?.({ step, call, input: asked.input });
    const committed = await scope.lease
      .guard(() =>
        commitTransition(store, step.stepId, (current) => {
          const at = now();
          notCounted = hookDecisionRefusal(current, { approvalId: call.approvalId, asked, verdict, now: at, currentPolicy });
          const transition = hookDecisionTransition(current, { approvalId: call.approvalId, hookName: active.name, asked, verdict, now: at, finished, currentPolicy });
          // Said only if it is not written all the same: past its deadline by the store's clock (Redis's
          // `TIME`), though this process's said it was in time. A step gone by the write is past it too:
          // its record outlives its deadline.
          if (transition) notCounted = PAST_DEADLINE;
          return transition && { ...transition, fence: scope.lease.fence };
        }, { onUnconfirmed: logUnconfirmedWithdrawal(logger) }),
      )
      .catch((error: unknown) => {
        if (isFencedError(error) || scope.lease.lost()) throw error;
        // Not written, and not for the deadline (no late verdict to record): the card is still posted, and people decide this call.
        notCounted = undefined;
        logger.error({ event: 'approval-hook-not-recorded', hook: active.name, stepId: step.stepId, toolName: call.toolName, err: error }, "could not record the approval hook's decision; the call waits for people");
        return undefined;
      });
    if (!committed && notCounted) await recordNotCounted(step, call, active, verdict, notCounted);
    return committed;
  }

  /**
   * Marks the step from now until the hook's time limit (and a moment to record its answer) is up,
   * just before it is asked: the mark the step was created with was counted from before the step
   * was built and stored. The step as it stands afterwards, or `step` when nothing was written.
   */
  async function markDeciding(scope: TurnScope, step: PendingStep, active: ApprovalHook): Promise<PendingStep> {
    const marked = await scope.lease
      .guard(() =>
        commitTransition(store, step.stepId, (current) => {
          const transition = hookStartedTransition(current, { until: hookDecidingDeadline({ hook: active, now: now() }) });
          return transition && { ...transition, fence: scope.lease.fence };
        }),
      )
      .catch((error: unknown) => {
        if (isFencedError(error) || scope.lease.lost()) throw error;
        // The hook is still asked, for the time the step's first mark leaves it (see `hookTimeLimit`).
        logger.error({ event: 'approval-hook-mark-failed', stepId: step.stepId, err: error }, 'could not mark the step while the approval hook decides');
        return undefined;
      });
    return marked ?? step;
  }

  /** People may act on the step again (the hook timed out, failed, or left the calls to them). */
  async function releaseStep(scope: TurnScope, step: PendingStep): Promise<PendingStep> {
    const released = await scope.lease
      .guard(() =>
        commitTransition(store, step.stepId, (current) => {
          const transition = hookFinishedTransition(current);
          return transition && { ...transition, fence: scope.lease.fence };
        }),
      )
      .catch((error: unknown) => {
        if (isFencedError(error) || scope.lease.lost()) throw error;
        // The mark's deadline lets people act once the hook's time is up.
        logger.error({ event: 'approval-hook-release-failed', stepId: step.stepId, err: error }, 'could not record that the approval hook is done; people can act once its time limit has passed');
        return undefined;
      });
    return released ?? step;
  }

  return async function consultApprovalHook(scope: TurnScope, opened: PendingStep): Promise<PendingStep> {
    if (!hook) return opened;
    const marked = await markDeciding(scope, opened, hook);
    const asking = marked.calls.flatMap((call) => {
      const asked = isQuestion(call) || Object.hasOwn(marked.decisions, call.approvalId) ? undefined : currentVersion(call);
      return asked ? [{ call, asked }] : [];
    });
    const timeLimitMs = hookTimeLimit({ hook, step: marked, now: now() });
    const verdicts = await Promise.all(asking.map(async ({ call, asked }) => ({ call, asked, verdict: await verdictFor(marked, call, asked, hook, timeLimitMs) })));
    const toCommit: { call: PendingCall; asked: InputVersion; verdict: HookVerdict }[] = [];
    for (const { call, asked, verdict } of verdicts) {
      if (!verdict) continue;
      if (verdict.decision === 'approve' && !hookMayApprove(marked, call.approvalId)) await refuseApproval(marked, call, hook);
      else toCommit.push({ call, asked, verdict });
    }
    let step = marked;
    for (const [index, { call, asked, verdict }] of toCommit.entries()) {
      // Only the last write lets people act: until then a click could come between two of the hook's decisions.
      const committed = await commitVerdict(scope, step, { call, asked, verdict }, hook, index === toCommit.length - 1);
      if (!committed) continue;
      step = committed;
      options.metrics.decisionRecorded({ toolName: call.toolName, outcome: verdict.decision === 'approve' ? 'approved' : 'denied', waitedMs: now() - step.createdAt });
      logger.info({ event: 'approval-hook-decided', hook: hook.name, stepId: step.stepId, toolName: call.toolName, decision: verdict.decision }, 'approval hook decided a call');
    }
    return step.hookDecidingUntil === undefined ? step : releaseStep(scope, step);
  };
}

/**
 * The mark a new step carries while the hook decides (see `PendingStep.hookDecidingUntil`): none
 * without a hook. Its deadline is the hook's time limit, plus a moment to record what it answered
 * at the last instant; past it the mark is ignored, so a process that stopped mid-hook cannot
 * leave the step undecidable. It is set again when the hook is asked (`markDeciding`).
 */
export function hookDecidingMark({ hook, now }: { hook: ApprovalHook | undefined; now: number }): { hookDecidingUntil?: number } {
  return hook ? { hookDecidingUntil: hookDecidingDeadline({ hook, now }) } : {};
}

function hookDecidingDeadline({ hook, now }: { hook: ApprovalHook; now: number }): number {
  return now + hook.timeoutMs + HOOK_RECORD_GRACE_MS;
}

/**
 * How long the hook may decide: its time limit, cut short so that it ends a moment (to record its
 * answer) before the step's mark does. People are kept off the step for the whole time the hook
 * decides, however long storing or marking the step took. No mark: the whole time limit.
 */
export function hookTimeLimit({ hook, step, now }: { hook: ApprovalHook; step: Pick<PendingStep, 'hookDecidingUntil'>; now: number }): number {
  if (step.hookDecidingUntil === undefined) return hook.timeoutMs;
  return Math.max(0, Math.min(hook.timeoutMs, step.hookDecidingUntil - HOOK_RECORD_GRACE_MS - now));
}

export type ConsultApprovalHook = ReturnType<typeof createApprovalHookConsultation>;
