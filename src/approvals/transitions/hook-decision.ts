import type { AuditEventInput } from '../../audit/audit-event.js';
import { hookActor } from '../approval-hook.js';
import { currentVersion } from '../input-version.js';
import { decisionOf, isQuestion, type Decision, type PendingStep } from '../pending-step.js';
import { completeIfDone, decisionEvent, nextRevision, type StepTransition } from './step-transition.js';

export type HookVerdict = { decision: 'approve' } | { decision: 'deny'; reason: string };

/**
 * A code-side decision (`onApprovalRequest`) on one call of a pending step, as a transition the
 * store commits like a person's: over the revision it was computed from, with its audit record,
 * under the turn's fence. The actor is `hook:<name>`, never a Slack user.
 *
 * An approval settles the call (it does not count as one of several approvers): the hook is the
 * operator's own code, it sees the rule's quorum and can leave such calls to people. A rule that
 * forbids automatic approval (`autoApprove: forbidden`) is kept: a hook may deny those calls but
 * not approve them. Undefined when there is nothing to do: the call is decided or the step closed.
 */
export function hookDecisionTransition(
  step: PendingStep,
  { approvalId, hookName, verdict, now }: { approvalId: string; hookName: string; verdict: HookVerdict; now: number },
): StepTransition | undefined {
  const call = step.calls.find((candidate) => candidate.approvalId === approvalId);
  if (!call || isQuestion(call) || step.phase !== 'pending' || decisionOf(step, approvalId)) return undefined;
  const version = currentVersion(call);
  if (!version) return undefined;
  if (verdict.decision === 'approve' && version.policy.autoApprove === 'forbidden') return undefined;
  const userId = hookActor(hookName);
  const next = nextRevision(step);
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

/** Whether a call's rule lets a hook approve it (see `hookDecisionTransition`). */
export function hookMayApprove(step: PendingStep, approvalId: string): boolean {
  const call = step.calls.find((candidate) => candidate.approvalId === approvalId);
  return call !== undefined && currentVersion(call)?.policy.autoApprove !== 'forbidden';
}
