import type { AuditEventInput } from '../../audit/audit-event.js';
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
 * Closes a step that can no longer be shown or decided (its card could not be posted): the
 * undecided calls get `decision`, usually a denial by the bot that says why.
 */
export function closeStepTransition(step: PendingStep, decision: Decision): StepTransition | undefined {
  return closeUndecided(step, decision, 'superseded');
}

/** The calls nobody decided in time expire; the step is then complete and the turn resumes. */
export function expireTransition(step: PendingStep, { now }: { now: number }): StepTransition | undefined {
  if (step.expiresAt === undefined || now < step.expiresAt) return undefined;
  const transition = closeUndecided(step, { outcome: 'expired', userId: EXPIRY_USER, at: now }, 'complete');
  if (!transition) return undefined;
  return { ...transition, completed: true };
}

function closeUndecided(step: PendingStep, decision: Decision, phase: 'superseded' | 'complete'): StepTransition | undefined {
  if (step.phase !== 'pending') return undefined;
  const next = nextRevision(step);
  const audit: AuditEventInput[] = [];
  for (const call of step.calls) {
    if (decisionOf(step, call.approvalId)) continue;
    next.decisions[call.approvalId] = { ...decision };
    audit.push(
      decision.outcome === 'expired'
        ? { type: 'expired', teamId: step.teamId, stepId: step.stepId, approvalId: call.approvalId, toolName: call.toolName }
        : decisionEvent(step, call, decision),
    );
  }
  next.phase = phase;
  return { step: next, fromRevision: step.revision, audit, closed: true };
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
