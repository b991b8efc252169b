import type { PendingStep } from './pending-step.js';

/**
 * How long a step's record outlives its deadline: the sweep that expires it (every
 * `COUNTERSIGN_SWEEP_INTERVAL_MS`, at most a day) and the resume that tells the thread and the
 * model must still find the step and its thread, after an outage across the deadline too.
 */
export const STEP_RECORD_GRACE_MS = 2 * 24 * 3_600_000;

/**
 * How long a new step's record, and the thread it waits in, are kept: the history's TTL, or until
 * its deadline and the grace when it can wait longer than that (`history.ttlHours: 12` with the
 * default 24h expiry). Kept for the history's TTL only, an unanswered request's record lapsed
 * before its deadline: the sweep found no step, and the card kept its buttons forever, its thread
 * and model never told. Set once: an edit or a deploy only brings the deadline forward, an
 * escalation leaves it, so nothing later needs to extend it. A step without a deadline (a
 * person's question) is kept for the history's TTL.
 */
export function stepRecordTtlMs({ step, historyTtlMs, now }: { step: Pick<PendingStep, 'expiresAt'>; historyTtlMs: number; now: number }): number {
  if (step.expiresAt === undefined) return historyTtlMs;
  return Math.max(historyTtlMs, Math.ceil(step.expiresAt - now) + STEP_RECORD_GRACE_MS);
}
