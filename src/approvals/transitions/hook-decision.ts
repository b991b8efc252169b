import type { AuditEventInput } from '../../audit/audit-event.js';
import { hookActor } from '../approval-hook.js';
import { currentVersion } from '../input-version.js';
import { decisionOf, isQuestion, type Decision, type PendingStep } from '../pending-step.js';
import { completeIfDone, decisionEvent, nextRevision, type StepTransition } from './step-transition.js';

export type HookVerdict = { decision: 'approve' } | { decision: 'deny'; reason: string };

/** Why a hook's decision was not recorded: the hook answered, but it no longer counts. */
export interface HookDecisionRefusal {
  code: 'not-found' | 'already-decided' | 'closed' | 'expired' | 'auto-approve-forbidden';
  reason: string;
}

/**
 * Whether the hook's verdict may still be recorded on the step as it stands: the same conditions a
 * person's click meets (the call undecided, the step pending and not past its expiry), and a rule
 * that forbids automatic approval is kept. Undefined when it may. Pure.
 */
export function hookDecisionRefusal(step: PendingStep, { approvalId, verdict, now }: { approvalId: string; verdict: HookVerdict; now: number }): HookDecisionRefusal | undefined {
  const call = step.calls.find((candidate) => candidate.approvalId === approvalId);
  if (!call || isQuestion(call) || !currentVersion(call)) return { code: 'not-found', reason: 'the call is no longer part of the request' };
  const decided = decisionOf(step, approvalId);
  if (decided) return { code: 'already-decided', reason: `the call was already ${decided.outcome} by ${decided.userId} while the hook was deciding` };
  if (step.phase !== 'pending') return { code: 'closed', reason: 'the request was closed while the hook was deciding' };
  if (step.expiresAt !== undefined && now >= step.expiresAt) return { code: 'expired', reason: 'the request expired before the hook decided' };
  if (verdict.decision === 'approve' && currentVersion(call)?.policy.autoApprove === 'forbidden') {
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
 * not approve them. Undefined when there is nothing to do (see `hookDecisionRefusal`).
 * `finished`: the hook's last write on the step, which lets people act on it again.
 */
export function hookDecisionTransition(
  step: PendingStep,
  { approvalId, hookName, verdict, now, finished = false }: { approvalId: string; hookName: string; verdict: HookVerdict; now: number; finished?: boolean },
): StepTransition | undefined {
  if (hookDecisionRefusal(step, { approvalId, verdict, now })) return undefined;
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
  return completeIfDone(next, [audit]);
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
  return call !== undefined && currentVersion(call)?.policy.autoApprove !== 'forbidden';
}
