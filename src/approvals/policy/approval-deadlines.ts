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
