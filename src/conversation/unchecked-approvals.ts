import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import type { UncheckedApproval } from '../approvals/recheck-approvals.js';

/**
 * How long a decided step waits for Slack to say who is in its approving groups before its
 * approvals that could not be checked are closed as an error. Slack's 5xx and rate limits pass in
 * seconds to a minute; a call approved this long ago should not run unannounced much later.
 */
export const UNCHECKED_APPROVAL_PATIENCE_MS = 5 * 60 * 1000;

/**
 * One fresh read of the groups per step per this long, across every replica: the recovery sweep
 * offers the resume again every few seconds, and `usergroups.users.list` is Tier 2 (about 20 a minute).
 */
export const GROUP_RECHECK_SPACING_MS = 20 * 1000;

/** The thread is told once that the approved call waits, if the wait has lasted this long. */
export const WAIT_NOTICE_AFTER_MS = 30 * 1000;

/** When the step's last decision came: the waits above count from there. */
export function decidedAt(step: PendingStep): number {
  return Math.max(step.createdAt, ...Object.values(step.decisions).map((decision) => decision.at));
}

/** Which slot of `GROUP_RECHECK_SPACING_MS` a check at `now` falls in; each slot allows one read. */
export function recheckSlot({ step, now }: { step: PendingStep; now: number }): number {
  return Math.max(0, Math.floor((now - decidedAt(step)) / GROUP_RECHECK_SPACING_MS));
}

export function patienceRanOut({ step, now }: { step: PendingStep; now: number }): boolean {
  return now - decidedAt(step) >= UNCHECKED_APPROVAL_PATIENCE_MS;
}

/** Group ids as plain text: a `<!subteam^…>` in a notice or on the card would ping the whole group. */
export function groupNames(unchecked: readonly UncheckedApproval[]): string {
  const ids = [...new Set(unchecked.flatMap((approval) => approval.groupIds))];
  return ids.length === 0 ? 'the approving user group' : `the user group${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;
}

/**
 * The approvals that could not be checked, closed by countersign itself (actor `countersign`, as
 * expiries and cards that could not be posted are): an error the model and the audit trail must not
 * read as the approvers' denial, since nobody was found not to be an approver.
 */
export function closeUncheckedApprovals({ step, unchecked, at }: { step: PendingStep; unchecked: readonly UncheckedApproval[]; at: number }): PendingStep {
  const decisions: Record<string, Decision> = { ...step.decisions };
  for (const approval of unchecked) {
    decisions[approval.approvalId] = {
      outcome: 'denied',
      userId: COUNTERSIGN_ACTOR,
      at,
      reason: `could not check who is in ${groupNames([approval])} to confirm its approvals (Slack did not answer), so nothing ran; ask again`,
    };
  }
  return { ...step, decisions };
}

/** Posted once while an approved call waits for Slack to answer. */
export function waitNoticeText(unchecked: readonly UncheckedApproval[]): string {
  const minutes = Math.round(UNCHECKED_APPROVAL_PATIENCE_MS / 60_000);
  return `:hourglass_flowing_sand: Approved, but I could not check who is in ${groupNames(unchecked)} to confirm the approvals, so nothing has run yet. I keep trying for up to ${minutes} minutes after the approval.`;
}
