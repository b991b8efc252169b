import type { ModelMessage } from 'ai';
import { approvedRunsFor } from '../agent/approved-runs.js';
import { COUNTERSIGN_ACTOR, denialReason } from '../agent/decision-messages.js';
import type { ApprovedRun } from '../agent/tool-set.js';
import { decisionOf, type Decision, type PendingStep } from '../approvals/pending-step.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import type { CurrentEvaluation } from '../approvals/policy/governing-policy.js';
import { recheckApprovals } from '../approvals/recheck-approvals.js';
import type { CarriedApproval } from '../store/thread-state.js';

/** A carried approval that no longer holds when Try again runs: its call is denied, never run. */
export interface Withdrawal {
  approval: CarriedApproval;
  /** Whom the audit trail names: the approver whose approval no longer holds, or countersign. */
  userId: string;
  code: 'approval-revoked' | 'approval-not-on-record';
  /** For the audit trail. */
  reason: string;
  /** What the model reads for the call. */
  told: string;
  /**
   * For an approval the stored step still records but that no longer holds (`approval-revoked`):
   * the step's decision that closes it, to be written on the step so its card says "Not run" and
   * why, not "Approved by …". None when the step has no such approval to close.
   */
  closing?: Decision;
}

export type CarriedApprovalsJudgement =
  | { kind: 'judged'; runs: Map<string, ApprovedRun>; withdrawn: Withdrawal[] }
  /** Slack did not answer for a group an approval depends on: nothing is decided, and the failure can be tried again. */
  | { kind: 'unchecked'; groupIds: string[] };

/**
 * The approvals a failed turn carried (`FailedTurn.approvedCalls`), judged again as a resume
 * judges them: an approval counts only while its step is still stored, is this thread's and was
 * claimed for its resume, still records that approval of that same version, and its approvers may
 * still approve (groups read fresh). The runs come from the stored step, never from the carried
 * copy, so Try again runs nothing the step no longer says was approved; a step past its lifetime
 * is not brought back.
 */
export async function judgeCarriedApprovals(options: {
  carried: readonly CarriedApproval[];
  threadKey: string;
  getStep: (stepId: string) => Promise<PendingStep | undefined>;
  resolveGroups: (groupIds: readonly string[], options: { fresh: true }) => Promise<GroupMembers>;
  currentEvaluation: CurrentEvaluation;
  /** The `onApprovalRequest` hook this process runs with: a hook's approval holds only while it is in force. */
  hookInForce?: string;
  now: number;
}): Promise<CarriedApprovalsJudgement> {
  const { now } = options;
  const runs = new Map<string, ApprovedRun>();
  const withdrawn: Withdrawal[] = [];
  for (const stepId of new Set(options.carried.map((approval) => approval.stepId))) {
    const carried = options.carried.filter((approval) => approval.stepId === stepId);
    const stored = await options.getStep(stepId);
    if (!stored || stored.threadKey !== options.threadKey || stored.phase !== 'resumed') {
      withdrawn.push(...carried.map((approval) => notOnRecord({ approval, now, reason: 'its approval is no longer on record (the request has expired), so it could not be checked again' })));
      continue;
    }
    // Only the carried calls: the step's other calls ran (or were denied) in the turn that failed.
    const approvalIds = new Set(carried.map((approval) => approval.approvalId));
    const step = { ...stored, calls: stored.calls.filter((call) => approvalIds.has(call.approvalId)) };
    const recheck = await recheckApprovals({ step, resolveGroups: options.resolveGroups, currentEvaluation: options.currentEvaluation, hookInForce: options.hookInForce, now });
    if (recheck.unchecked.length > 0) return { kind: 'unchecked', groupIds: [...new Set(recheck.unchecked.flatMap((approval) => approval.groupIds))] };
    const approved = approvedRunsFor(recheck.step);
    for (const approval of carried) {
      const run = approved.get(approval.toolCallId);
      if (run && isSameApproval(run, approval)) {
        runs.set(approval.toolCallId, run);
        continue;
      }
      const revocation = recheck.revoked.find((candidate) => candidate.approvalId === approval.approvalId);
      const decision = decisionOf(recheck.step, approval.approvalId);
      withdrawn.push(
        revocation && decision
          ? { approval, userId: revocation.userId, code: 'approval-revoked', reason: revocation.reason, told: denialReason(decision), closing: decision }
          : notOnRecord({ approval, now, reason: 'the approval on record no longer matches this call, so it could not be checked again' }),
      );
    }
  }
  return { kind: 'judged', runs, withdrawn };
}

/** What Try again needs to find each approval again in its step: the call, the version signed, and who signed it. */
export function carriedApprovals(runs: ReadonlyMap<string, ApprovedRun>): CarriedApproval[] {
  return [...runs].map(([toolCallId, { toolName, basis }]) => ({
    toolCallId,
    toolName,
    stepId: basis.stepId,
    approvalId: basis.approvalId,
    version: basis.version,
    inputHash: basis.inputHash,
    approvedBy: [...basis.approvedBy],
  }));
}

/**
 * The history with each withdrawn approval turned into a denial that says why, in the last tool
 * message where the AI SDK reads approvals: the call is answered "not run" instead of being replayed.
 * Also how the recovery of an interrupted resume answers the approvals it finds no longer hold.
 */
export function withWithdrawals(messages: readonly ModelMessage[], withdrawn: ReadonlyArray<Pick<Withdrawal, 'told'> & { approval: Pick<CarriedApproval, 'approvalId'> }>): ModelMessage[] {
  const last = messages.at(-1);
  if (withdrawn.length === 0 || last?.role !== 'tool') return [...messages];
  const told = new Map(withdrawn.map((withdrawal) => [withdrawal.approval.approvalId, withdrawal.told]));
  const content = last.content.map((part) => {
    const reason = part.type === 'tool-approval-response' ? told.get(part.approvalId) : undefined;
    return part.type === 'tool-approval-response' && reason !== undefined ? { ...part, approved: false, reason } : part;
  });
  return [...messages.slice(0, -1), { ...last, content }];
}

/** The same call, the same version of its input, signed by the same people, as when the turn failed. */
function isSameApproval(run: ApprovedRun, approval: CarriedApproval): boolean {
  const { basis } = run;
  return (
    run.toolName === approval.toolName &&
    basis.approvalId === approval.approvalId &&
    basis.version === approval.version &&
    basis.inputHash === approval.inputHash &&
    basis.approvedBy.join(',') === approval.approvedBy.join(',')
  );
}

/** Closed by countersign, as an error rather than anyone's denial: nobody declined the call. */
function notOnRecord(options: { approval: CarriedApproval; now: number; reason: string }): Withdrawal {
  const { approval, now, reason } = options;
  return { approval, userId: COUNTERSIGN_ACTOR, code: 'approval-not-on-record', reason, told: denialReason({ outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: now, reason }) };
}
