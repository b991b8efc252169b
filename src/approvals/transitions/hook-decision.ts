import type { AuditEventInput } from '../../audit/audit-event.js';
import { hookActor } from '../approval-hook.js';
import { currentVersion } from '../input-version.js';
import { decisionOf, isQuestion, type Decision, type InputVersion, type PendingStep } from '../pending-step.js';
import { governingExpiry } from '../policy/approval-deadlines.js';
import type { PolicyEvaluation } from '../policy/evaluate-policy.js';
import { actionDeadline } from './action-deadline.js';
import { completeIfDone, decisionEvent, nextRevision, type ActionTransition, type StepTransition } from './step-transition.js';

export type HookVerdict = { decision: 'approve' } | { decision: 'deny'; reason: string };

/** The version of a call the hook was shown: its approval counts for that input and no other. */
export type HookAskedVersion = Pick<InputVersion, 'number' | 'inputHash'>;

/** Why a hook's decision was not recorded: the hook answered, but it no longer counts. */
export interface HookDecisionRefusal {
  code: 'not-found' | 'already-decided' | 'closed' | 'expired' | 'input-changed' | 'auto-approve-forbidden';
  reason: string;
}

/**
 * Whether the hook's verdict may still be recorded on the step as it stands: the same conditions a
 * person's click meets (the call undecided, the step pending and not past its expiry, under the
 * config in force too: `currentPolicy`, as a click's `CallActionContext.currentPolicy`; an approval
 * only of the version that was shown: `asked`), and a rule that forbids automatic approval is
 * kept. A deny holds whatever the version, as a person's does: a veto must not be lost to an edit
 * the hook never saw. Undefined when it may. Pure.
 */
export function hookDecisionRefusal(
  step: PendingStep,
  { approvalId, asked, verdict, now, currentPolicy }: { approvalId: string; asked: HookAskedVersion; verdict: HookVerdict; now: number; currentPolicy?: PolicyEvaluation | undefined },
): HookDecisionRefusal | undefined {
  const call = step.calls.find((candidate) => candidate.approvalId === approvalId);
  const version = call && !isQuestion(call) ? currentVersion(call) : undefined;
  if (!version) return { code: 'not-found', reason: 'the call is no longer part of the request' };
  const decided = decisionOf(step, approvalId);
  if (decided) return { code: 'already-decided', reason: `the call was already ${decided.outcome} by ${decided.userId} while the hook was deciding` };
  if (step.phase !== 'pending') return { code: 'closed', reason: 'the request was closed while the hook was deciding' };
  const expiresAt = governingExpiry({ step, current: currentPolicy });
  if (expiresAt !== undefined && now >= expiresAt) return { code: 'expired', reason: 'the request expired before the hook decided' };
  if (verdict.decision === 'approve' && (version.number !== asked.number || version.inputHash !== asked.inputHash)) {
    const by = version.editedBy ? ` by ${version.editedBy}` : '';
    return { code: 'input-changed', reason: `the input was edited${by} while the hook was deciding (now version ${version.number + 1}); the hook approved version ${asked.number + 1}` };
  }
  if (verdict.decision === 'approve' && !ruleLetsHookApprove(version.policy)) {
    return { code: 'auto-approve-forbidden', reason: 'the policy rule forbids automatic approval of this tool, so people decide' };
  }
  return undefined;
}

/**
 * A code-side decision (`onApprovalRequest`) on one call of a pending step, as a transition the
 * store commits like a person's: over the revision it was computed from, with its audit record,
 * under the turn's fence. The actor is `hook:<name>`, never a Slack user.
 *
 * An approval settles the call (it does not count as one of several approvers): the hook is the
 * operator's own code, it sees the rule's quorum and can leave such calls to people. A rule that
 * forbids automatic approval (`autoApprove: forbidden`) is kept: a hook may deny those calls but
 * not approve them. An approval names the version the hook was asked about (`asked`), which is
 * the version that runs. Undefined when there is nothing to do (see `hookDecisionRefusal`).
 * `finished`: the hook's last write on the step, which lets people act on it again. It carries the
 * deadline a click does (`actionDeadline`: the step's expiry, under the config in force too,
 * `currentPolicy`): `now` is the clock of the process that asked the hook, and the store judges the
 * deadline again by Redis's, the one every replica shares.
 */
export function hookDecisionTransition(
  step: PendingStep,
  {
    approvalId,
    hookName,
    asked,
    verdict,
    now,
    finished = false,
    currentPolicy,
  }: { approvalId: string; hookName: string; asked: HookAskedVersion; verdict: HookVerdict; now: number; finished?: boolean; currentPolicy?: PolicyEvaluation | undefined },
): ActionTransition | undefined {
  if (hookDecisionRefusal(step, { approvalId, asked, verdict, now, currentPolicy })) return undefined;
  const call = step.calls.find((candidate) => candidate.approvalId === approvalId);
  const version = call && currentVersion(call);
  if (!call || !version) return undefined;
  const userId = hookActor(hookName);
  const next = nextRevision(step);
  if (finished) delete next.hookDecidingUntil;
  const decision: Decision =
    verdict.decision === 'approve'
      ? { outcome: 'approved', userId, at: now, version: version.number, inputHash: version.inputHash, approvedBy: [userId] }
      : { outcome: 'denied', userId, at: now, reason: verdict.reason };
  next.decisions[approvalId] = decision;
  const audit: AuditEventInput =
    verdict.decision === 'approve'
      ? ({ ...decisionEvent(step, call, decision), version: version.number, inputHash: version.inputHash, approvedBy: [userId] } as AuditEventInput)
      : decisionEvent(step, call, decision);
  const done = completeIfDone(next, [audit], decision);
  return { ...done, deadline: actionDeadline({ read: step, written: done.step, currentPolicy }) };
}

/**
 * The hook is about to be asked: the step's mark is set again from this moment (`until`), since the
 * one it was created with was counted from before the step was built and stored, and a slow write
 * may have used up part of it. Undefined when the step is no longer pending or already marked
 * until then.
 */
export function hookStartedTransition(step: PendingStep, { until }: { until: number }): StepTransition | undefined {
  if (step.phase !== 'pending' || (step.hookDecidingUntil !== undefined && step.hookDecidingUntil >= until)) return undefined;
  const next = nextRevision(step);
  next.hookDecidingUntil = until;
  return { step: next, fromRevision: step.revision, audit: [] };
}

/**
 * The hook is done with the step (it decided nothing more, timed out or failed): people may act
 * on it from here. Undefined when the step carries no mark (a decision already removed it).
 */
export function hookFinishedTransition(step: PendingStep): StepTransition | undefined {
  if (step.hookDecidingUntil === undefined) return undefined;
  const next = nextRevision(step);
  delete next.hookDecidingUntil;
  return { step: next, fromRevision: step.revision, audit: [] };
}

/** Whether a call's rule lets a hook approve it (see `hookDecisionTransition`). */
export function hookMayApprove(step: PendingStep, approvalId: string): boolean {
  const call = step.calls.find((candidate) => candidate.approvalId === approvalId);
  const version = call && currentVersion(call);
  return version !== undefined && ruleLetsHookApprove(version.policy);
}

/**
 * Whether a policy lets a hook approve the calls it governs: a rule that forbids automatic approval
 * keeps them for people. Asked when the hook answers and again at resume (`recheckApprovals`), of
 * the policy in force then too.
 */
export function ruleLetsHookApprove(policy: Pick<PolicyEvaluation, 'autoApprove'>): boolean {
  return policy.autoApprove !== 'forbidden';
}
