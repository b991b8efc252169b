import type { PendingStep } from '../pending-step.js';
import { governingExpiry } from '../policy/approval-deadlines.js';
import type { PolicyEvaluation } from '../policy/evaluate-policy.js';

/**
 * The deadline the write of an action on a call must come before (`StepTransition.deadline`), a
 * person's click or the approval hook's verdict alike: the earliest that applies. That is the step's
 * as `read`, under the config in force too (`governingExpiry` with `currentPolicy`: a deploy may have
 * shortened the rule's expiry since the step was created), and the one the step as `written`
 * carries: an edit that put a call under a rule with a shorter expiry (staging's hour to prod's ten
 * minutes) brought it forward (`editedDeadlines`), and an edit that counts as the approval of the new
 * input must not be recorded past it by Redis's clock because this replica's own still said it was in time.
 */
export function actionDeadline({ read, written, currentPolicy }: { read: PendingStep; written: PendingStep; currentPolicy: PolicyEvaluation | undefined }): number | undefined {
  const deadlines = [governingExpiry({ step: read, current: currentPolicy }), written.expiresAt].filter((deadline) => deadline !== undefined);
  return deadlines.length === 0 ? undefined : Math.min(...deadlines);
}
