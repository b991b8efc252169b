import { COUNTERSIGN_ACTOR } from '../../agent/decision-messages.js';
import type { AuditEventInput } from '../../audit/audit-event.js';
import { deciderText } from '../approval-hook.js';
import { decisionOf, type Decision, type PendingStep } from '../pending-step.js';
import { decisionEvent, nextRevision, type StepTransition } from './step-transition.js';

/** Decisions made by the clock rather than a person carry this as their user. */
export const EXPIRY_USER = 'countersign';

/**
 * A newer message in the thread closes the calls nobody decided: they will not run, and the model
 * is told why. Undefined when the step is not pending (a last click or another close won).
 */
export function supersedeTransition(step: PendingStep, { userId, now }: { userId: string; now: number }): StepTransition | undefined {
  return closeUndecided(step, { outcome: 'superseded', userId, at: now }, 'superseded');
}

/**
 * Closes a step that can no longer be shown or decided (its card could not be posted, its history
 * was dropped): the undecided calls get `decision`, usually a denial by the bot that says why, and
 * so do the approved ones (the approval hook's, given before the card), which will not run either
 * since approved calls run only at the step's resume. Their approval is closed on the record, with
 * the reason and who had approved them, so neither the model nor the audit trail reads it as a
 * newer message having come first. A denial stays as it was.
 */
export function closeStepTransition(step: PendingStep, decision: Decision): StepTransition | undefined {
  return closeUndecided(step, decision, 'superseded', { closeApproved: true });
}

/**
 * The calls nobody decided in time expire; the step is then complete and the turn resumes.
 * `expiresAt`: the step's deadline under the config in force too (`governingExpiry`), when the
 * caller asked it; else the stored one.
 */
export function expireTransition(step: PendingStep, { now, expiresAt = step.expiresAt }: { now: number; expiresAt?: number | undefined }): StepTransition | undefined {
  if (expiresAt === undefined || now < expiresAt) return undefined;
  const transition = closeUndecided(step, { outcome: 'expired', userId: EXPIRY_USER, at: now }, 'complete');
  if (!transition) return undefined;
  // Not a withdrawal to wait for: an expiry a failover lost is made again by the next sweep, and no click counts past `expiresAt` meanwhile.
  const { withdraws: _redoneIfLost, ...expired } = transition;
  return { ...expired, completed: true };
}

function closeUndecided(step: PendingStep, decision: Decision, phase: 'superseded' | 'complete', { closeApproved = false } = {}): StepTransition | undefined {
  if (step.phase !== 'pending') return undefined;
  const next = nextRevision(step);
  const audit: AuditEventInput[] = [];
  for (const call of step.calls) {
    const decided = decisionOf(step, call.approvalId);
    if (decided && !(closeApproved && decided.outcome === 'approved')) continue;
    const closing: Decision = decided ? { ...decision, reason: approvalClosedReason(decision, decided) } : { ...decision };
    next.decisions[call.approvalId] = closing;
    audit.push(
      closing.outcome === 'expired'
        ? { type: 'expired', teamId: step.teamId, stepId: step.stepId, approvalId: call.approvalId, toolName: call.toolName }
        : decisionEvent(step, call, closing),
    );
  }
  next.phase = phase;
  return { step: next, fromRevision: step.revision, audit, closed: true, withdraws: true };
}

/**
 * A failed turn kept these approvals for its Try again (`FailedTurn.approvedCalls`), and a newer
 * message came instead: their calls, never started, will not run. Each approval still on the
 * resumed step is closed as countersign's (`reason`, and who had approved it), so the card says
 * "Not run" and why rather than "Approved by …", and audited. Written with the thread that tells
 * the model so, by the thread's holder (`commitStepWithThread`, as a resume claim is); undefined
 * when the step is not resumed or none of `approvalIds` is still approved on it.
 */
export function closeCarriedApprovalsTransition(
  step: PendingStep,
  { fence, approvalIds, reason, now }: { fence: { threadKey: string; token: string }; approvalIds: readonly string[]; reason: string; now: number },
): StepTransition | undefined {
  const decisions: Record<string, Decision> = {};
  const audit: AuditEventInput[] = [];
  for (const call of step.calls) {
    const approved = decisionOf(step, call.approvalId);
    if (!approvalIds.includes(call.approvalId) || approved?.outcome !== 'approved') continue;
    const closing: Decision = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: now, reason };
    decisions[call.approvalId] = { ...closing, reason: approvalClosedReason(closing, approved) };
    audit.push(decisionEvent(step, call, decisions[call.approvalId]!));
  }
  if (audit.length === 0) return undefined;
  const transition = rejudgeResumeTransition(step, { fence, decisions });
  return transition && { ...transition, audit };
}

/** Why an approved call was closed unrun: the step's reason, and whose approval lapsed with it. */
function approvalClosedReason(closing: Decision, approved: Decision): string {
  const by = (approved.approvedBy ?? [approved.userId]).map(deciderText).join(' and ');
  return `${closing.reason ?? 'countersign closed this call'}; it had been approved by ${by}, but was closed before it ran`;
}

/**
 * Claims the resume of a complete step for the thread holder with fencing token `token`. A step
 * another holder claimed can be claimed again only by a newer holder: the store applies this with
 * the thread's fence, so the old holder, fenced out, can no longer write anything of that resume.
 */
export function claimResumeTransition(step: PendingStep, { threadKey, token }: { threadKey: string; token: string }): StepTransition | undefined {
  const reclaim = step.phase === 'resumed' && step.resumedBy !== token;
  if (step.phase !== 'complete' && !reclaim) return undefined;
  const next = nextRevision(step);
  next.phase = 'resumed';
  next.resumedBy = token;
  return { step: next, fromRevision: step.revision, audit: [], resumed: true, fence: { threadKey, token } };
}

/**
 * A decided step whose thread's saved state is gone (Redis evicted or flushed its keys): the turn it
 * paused cannot go on, since the model's calls went with the history. It is claimed as a resume is,
 * by the thread holder under its fence (so it leaves the decided-steps index and the recovery sweep
 * stops offering it), with every approved call closed unrun by `decision` (the bot's, saying why)
 * and who had approved it, so the card and the audit trail say it was not run. A denial or an
 * answer stays as it was. Undefined for a step that is not decided and unclaimed.
 */
export function closeLostThreadTransition(step: PendingStep, { fence, decision }: { fence: { threadKey: string; token: string }; decision: Decision }): StepTransition | undefined {
  if (step.phase !== 'complete') return undefined;
  const claim = claimResumeTransition(step, fence);
  if (!claim) return undefined;
  const audit: AuditEventInput[] = [];
  for (const call of step.calls) {
    const decided = decisionOf(step, call.approvalId);
    if (decided?.outcome !== 'approved') continue;
    const closing: Decision = { ...decision, reason: approvalClosedReason(decision, decided) };
    claim.step.decisions[call.approvalId] = closing;
    audit.push(decisionEvent(step, call, closing));
  }
  return { ...claim, audit };
}

/**
 * A resume a process claimed and stopped before its calls started, taken over by the thread holder
 * that recovers it, with the approvals of those calls judged again under the config in force:
 * `decisions` closes the ones that no longer hold, as the claim would have. The step stays resumed,
 * now this holder's; written with the thread that tells the model so (`commitStepWithThread`).
 */
export function rejudgeResumeTransition(step: PendingStep, { fence, decisions }: { fence: { threadKey: string; token: string }; decisions: Readonly<Record<string, Decision>> }): StepTransition | undefined {
  if (step.phase !== 'resumed') return undefined;
  const next = nextRevision(step);
  next.decisions = { ...next.decisions, ...structuredClone(decisions) };
  next.resumedBy = fence.token;
  return { step: next, fromRevision: step.revision, audit: [], resumed: true, fence };
}
