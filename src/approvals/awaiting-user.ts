import { approvalsOf, currentVersion } from './input-version.js';
import { hookIsDeciding, isQuestion, undecidedCalls, type InputVersion, type PendingCall, type PendingStep } from './pending-step.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { governingExpiry } from './policy/approval-deadlines.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';
import { authorizeGoverned, governingEvaluations, governingPolicy, type GoverningPolicy } from './policy/governing-policy.js';

/** One call someone could approve now, and the version they would be approving. */
export interface AwaitingCall {
  step: PendingStep;
  call: PendingCall;
  version: InputVersion;
}

/**
 * The config in force's evaluation of an open call's current version (a `CurrentEvaluation`, asked
 * beforehand: it may run a tool's own approval rule, which is async), or undefined where it could
 * not be had. A click on such a call could not be judged either, so it is listed to nobody.
 */
export type CurrentPolicyOf = (call: PendingCall) => PolicyEvaluation | undefined;

/**
 * The undecided approval calls someone in `memberOf`'s channels might approve now: of pending steps
 * that have not expired and that the approval hook is not still deciding (a click would be refused,
 * and the hook's decision comes first). What `callsAwaitingUser` judges, so the calls whose config
 * in force to ask before it. Pure.
 */
export function openCallsIn({ steps, memberOf, now }: { steps: readonly PendingStep[]; memberOf: ReadonlySet<string>; now: number }): AwaitingCall[] {
  const open: AwaitingCall[] = [];
  for (const step of steps) {
    if (step.phase !== 'pending' || !memberOf.has(step.channel)) continue;
    if (step.expiresAt !== undefined && now >= step.expiresAt) continue;
    if (hookIsDeciding(step, now)) continue;
    for (const call of undecidedCalls(step)) {
      const version = isQuestion(call) ? undefined : currentVersion(call);
      if (version) open.push({ step, call, version });
    }
  }
  return open;
}

/**
 * The undecided approval calls `userId` may approve right now, newest step first: the same
 * judgement a click gets (`applyCallAction` → `authorizeGoverned` under the governing policy, the
 * card's and the config in force's together, so no self-approval, no second approval towards a
 * quorum, and nobody a deploy took off the rule or the card never named), limited to `openCallsIn`
 * the person's channels, and not past the deadline the click goes by (`governingExpiry`: a deploy
 * that shortened the rule's expiry has the click refuse it as expired). Pure: the config in force
 * is read beforehand (`currentPolicyOf`).
 */
export function callsAwaitingUser({
  steps,
  userId,
  memberOf,
  groupMembers,
  now,
  currentPolicyOf,
}: {
  steps: readonly PendingStep[];
  userId: string;
  memberOf: ReadonlySet<string>;
  groupMembers: GroupMembers;
  now: number;
  currentPolicyOf: CurrentPolicyOf;
}): AwaitingCall[] {
  return openCallsIn({ steps, memberOf, now }).filter(({ step, call, version }) => {
    const governing = governingOf({ step, call, version }, currentPolicyOf);
    if (!governing) return false;
    const expiresAt = governingExpiry({ step, current: currentPolicyOf(call) });
    if (expiresAt !== undefined && now >= expiresAt) return false;
    const approvedBy = approvalsOf(step, call, version.number).map((approval) => approval.userId);
    return authorizeGoverned({ governing, userId, requesterId: step.requesterId, instigatorIds: step.instigatorIds, groupMembers, approvedBy }).allowed;
  });
}

/** Every user group the governing policies of these calls name, to resolve once before `callsAwaitingUser`. */
export function groupsNamedBy(calls: readonly AwaitingCall[], currentPolicyOf: CurrentPolicyOf): string[] {
  const evaluations = calls.flatMap((awaiting) => {
    const governing = governingOf(awaiting, currentPolicyOf);
    return governing ? governingEvaluations(governing) : [];
  });
  return [...new Set(evaluations.flatMap(approverGroupIds))];
}

function governingOf({ step, call, version }: AwaitingCall, currentPolicyOf: CurrentPolicyOf): GoverningPolicy | undefined {
  const current = currentPolicyOf(call);
  return current ? governingPolicy({ step, stored: version.policy, current }) : undefined;
}
