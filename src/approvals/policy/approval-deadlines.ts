import type { PendingStep } from '../pending-step.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

export interface ApprovalDeadlines {
  /** Epoch milliseconds after which nobody can decide any more; `evaluation.onExpiry` applies. */
  expiresAt: number;
  /** Epoch milliseconds at which to remind the approvers in the thread, when the rule asks for it. */
  remindAt?: number;
}

export function approvalDeadlines({ evaluation, requestedAt }: { evaluation: PolicyEvaluation; requestedAt: number }): ApprovalDeadlines {
  const expiresAt = requestedAt + evaluation.expiryMs;
  if (evaluation.reminderMs === undefined) return { expiresAt };
  return { expiresAt, remindAt: expiresAt - evaluation.reminderMs };
}

/**
 * When a waiting version expires: the earlier of the step's stored deadline and the request time
 * plus the `expiry` the config in force sets for the version's input (`current`, when it asks for
 * approval at all, as `governingPolicy` takes it). So a deploy that shortened a rule's expiry
 * reaches a card posted under the longer one, at every click and edit and at resume, and one that
 * lengthened it never buys a waiting card time. A step without a deadline (only a person's
 * questions wait on it) has none to shorten.
 */
export function governingExpiry({ step, current }: { step: Pick<PendingStep, 'createdAt' | 'expiresAt'>; current: PolicyEvaluation | undefined }): number | undefined {
  if (step.expiresAt === undefined || current === undefined || !current.needsApproval) return step.expiresAt;
  return Math.min(step.expiresAt, approvalDeadlines({ evaluation: current, requestedAt: step.createdAt }).expiresAt);
}

export interface EditedDeadlines extends ApprovalDeadlines {
  /** The step's expiry came earlier: its schedule must move with it. */
  expiryMoved: boolean;
  /** The step's reminder came earlier (or it had none): its schedule must move with it. */
  reminderMoved: boolean;
}

/**
 * A step's deadlines once one of its calls is edited to an input under `evaluation`. The rule of
 * the new input is counted from the request, as when the step was made, so an edit neither
 * restarts the clock nor buys time: the step keeps the earlier of its expiry and the new rule's
 * (and of the one the config in force sets for the new input, `inForce`, when a deploy shortened
 * it), and a request older than that allows is past its expiry (`expiresAt <= now`). The reminder
 * moves earlier only while the step's own has not come due, so nobody is reminded twice.
 */
export function editedDeadlines({
  step,
  evaluation,
  inForce,
  now,
}: {
  step: Pick<PendingStep, 'createdAt' | 'expiresAt' | 'remindAt'>;
  evaluation: PolicyEvaluation;
  inForce?: PolicyEvaluation | undefined;
  now: number;
}): EditedDeadlines {
  const rule = approvalDeadlines({ evaluation, requestedAt: step.createdAt });
  const inForceExpiresAt = inForce?.needsApproval ? approvalDeadlines({ evaluation: inForce, requestedAt: step.createdAt }).expiresAt : Infinity;
  const expiresAt = Math.min(step.expiresAt ?? Infinity, rule.expiresAt, inForceExpiresAt);
  const expiryMoved = expiresAt !== step.expiresAt;
  const reminderPending = step.remindAt === undefined || step.remindAt > now;
  const reminderMoved = rule.remindAt !== undefined && rule.remindAt < expiresAt && reminderPending && rule.remindAt < (step.remindAt ?? Infinity);
  const remindAt = reminderMoved ? rule.remindAt : step.remindAt;
  return { expiresAt, ...(remindAt === undefined ? {} : { remindAt }), expiryMoved, reminderMoved };
}
