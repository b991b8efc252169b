import { approvalsOf, currentVersion } from './input-version.js';
import { hookIsDeciding, isQuestion, undecidedCalls, type InputVersion, type PendingCall, type PendingStep } from './pending-step.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { authorizeApprover } from './policy/authorize-approver.js';

/** One call someone could approve now, and the version they would be approving. */
export interface AwaitingCall {
  step: PendingStep;
  call: PendingCall;
  version: InputVersion;
}

/**
 * The undecided approval calls `userId` may approve right now, newest step first: the same
 * judgement a click gets (`applyCallAction` → `authorizeApprover` under the current version's
 * policy, so no self-approval and no second approval towards a quorum), limited to channels the
 * person is in (`memberOf`) and to steps that have not expired and that the approval hook is not
 * still deciding (a click would be refused, and the hook's decision comes first). Pure.
 */
export function callsAwaitingUser({
  steps,
  userId,
  memberOf,
  groupMembers,
  now,
}: {
  steps: readonly PendingStep[];
  userId: string;
  memberOf: ReadonlySet<string>;
  groupMembers: GroupMembers;
  now: number;
}): AwaitingCall[] {
  const awaiting: AwaitingCall[] = [];
  for (const step of steps) {
    if (step.phase !== 'pending' || !memberOf.has(step.channel)) continue;
    if (step.expiresAt !== undefined && now >= step.expiresAt) continue;
    if (hookIsDeciding(step, now)) continue;
    for (const call of undecidedCalls(step)) {
      const version = isQuestion(call) ? undefined : currentVersion(call);
      if (!version) continue;
      const approvedBy = approvalsOf(step, call, version.number).map((approval) => approval.userId);
      if (authorizeApprover({ evaluation: version.policy, userId, requesterId: step.requesterId, instigatorIds: step.instigatorIds, groupMembers, approvedBy }).allowed) awaiting.push({ step, call, version });
    }
  }
  return awaiting;
}

/** Every user group the current versions of these steps' calls name, to resolve once before `callsAwaitingUser`. */
export function groupsNamedBy(steps: readonly PendingStep[]): string[] {
  const versions = steps.flatMap((step) => step.calls.map(currentVersion));
  return [...new Set(versions.flatMap((version) => (version ? approverGroupIds(version.policy) : [])))];
}
