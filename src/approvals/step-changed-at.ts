import type { PendingStep } from './pending-step.js';

/**
 * Epoch milliseconds of the newest change a card of `step` shows: a decision (a close, an expiry and
 * a supersede are decisions too), an approval counted, an edit's version. Undefined for a step with
 * none of these (only its request).
 */
export function stepChangedAt(step: Pick<PendingStep, 'decisions' | 'approvals' | 'calls'>): number | undefined {
  const times = [
    ...Object.values(step.decisions).map((decision) => decision.at),
    ...Object.values(step.approvals ?? {}).flatMap((approvals) => approvals.map((approval) => approval.at)),
    ...step.calls.flatMap((call) => (call.versions ?? []).slice(1).map((version) => version.at)),
  ];
  return times.length === 0 ? undefined : Math.max(...times);
}
