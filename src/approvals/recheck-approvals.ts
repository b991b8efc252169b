import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { deciderText, hookNameOf } from './approval-hook.js';
import { approvedVersion } from './input-version.js';
import { decisionOf, type Decision, type PendingStep } from './pending-step.js';
import { governingExpiry } from './policy/approval-deadlines.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { authorizeGoverned, governingEvaluations, governingPolicy, POLICY_CHANGED_TEXT, type CurrentEvaluation, type GoverningPolicy } from './policy/governing-policy.js';
import { ruleLetsHookApprove } from './transitions/hook-decision.js';

export interface Revocation {
  approvalId: string;
  userId: string;
  reason: string;
}

/** An approval that could be neither confirmed nor refused: a group it depends on could not be read. */
export interface UncheckedApproval {
  approvalId: string;
  groupIds: string[];
}

/**
 * Authorization again, at resume: an approver removed from the approving group (or a record that
 * does not hold together) between the click and the resume must not let the call run; nor one a
 * deploy took off the rule, nor a quorum it raised, nor one given after an expiry it shortened
 * (`governingExpiry`): the config in force governs with the policy the card showed
 * (`governingPolicy`), however the approvals were counted when given. Approvals
 * that no longer hold are closed by countersign, saying why and naming the approver: nobody denied
 * the call (the approver approved it), so the card says "Not run" and the model hears an error, not
 * a refusal. `revoked` still names the approver, for the audit trail. Groups are read fresh, past any cache: this
 * check, not the click's, decides whether the call runs. An approval whose group Slack did not
 * answer for is `unchecked` and left approved in `step`: nobody was found not to be an approver,
 * so the caller waits and asks again, or closes the call as an error (never as someone's denial).
 * An `onApprovalRequest` hook's approval settles its call without a quorum or group, but it too
 * holds only while the hook that gave it is the one in force and both policies still let a hook
 * approve the call (`hookApprovalLapse`).
 */
export async function recheckApprovals(options: {
  step: PendingStep;
  resolveGroups: (groupIds: readonly string[], options: { fresh: true }) => Promise<GroupMembers>;
  /** The config in force's evaluation of an approved version's input. */
  currentEvaluation: CurrentEvaluation;
  /** The name of the `onApprovalRequest` hook this process runs with; none: no hook's approval holds. */
  hookInForce?: string;
  now: number;
}): Promise<{ step: PendingStep; revoked: Revocation[]; unchecked: UncheckedApproval[] }> {
  const { step } = options;
  const decisions: Record<string, Decision> = { ...step.decisions };
  const revoked: Revocation[] = [];
  const unchecked: UncheckedApproval[] = [];
  const revoke = (approvalId: string, userId: string, reason: string, text: string) => {
    revoked.push({ approvalId, userId, reason });
    decisions[approvalId] = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: options.now, reason: text };
  };
  const toCheck: { approvalId: string; governing: GoverningPolicy; approvers: string[] }[] = [];
  for (const call of step.calls) {
    const decision = decisionOf(step, call.approvalId);
    if (decision?.outcome !== 'approved') continue;
    const version = approvedVersion(step, call);
    if (!version) {
      revoke(call.approvalId, decision.userId, 'the approval does not match any version of the input', `the approval by ${deciderText(decision.userId)} on record does not match the input`);
      continue;
    }
    const current = await options.currentEvaluation({ step, call, input: version.input });
    // Approved after the deadline the config in force sets (a deploy shortened the rule's expiry):
    // the request had expired by then, as a click would now be told. `decision.at` is the clock of
    // the replica that recorded it; an approval past the deadline in force at the click never gets
    // here, whatever that clock said (Redis's refused its write: `StepTransition.deadline`, an
    // edit's the earlier of the card's and the edited rule's). Only a deploy after the click is
    // judged here by that clock, for an approval that was in time by every rule in force when given.
    const expiresAt = governingExpiry({ step, current });
    if (expiresAt !== undefined && decision.at >= expiresAt) {
      revoke(call.approvalId, decision.userId, `approved after the request expired ${POLICY_CHANGED_TEXT}`, `it was approved after the request expired ${POLICY_CHANGED_TEXT}`);
      continue;
    }
    const governing = governingPolicy({ step, stored: version.policy, current });
    const hookName = hookNameOf(decision.userId);
    if (hookName !== undefined) {
      // The hook's approval settles the call by itself (see `hookDecisionTransition`): no quorum or group to re-check.
      const lapse = hookApprovalLapse({ hookName, hookInForce: options.hookInForce, governing });
      if (lapse !== undefined) revoke(call.approvalId, decision.userId, lapse, `the approval by ${deciderText(decision.userId)} no longer holds (${lapse})`);
      continue;
    }
    const approvers = [...new Set(decision.approvedBy ?? [])];
    if (approvers.length < governing.required) {
      const now = approvers.length >= version.policy.required ? ` ${POLICY_CHANGED_TEXT}` : '';
      const by = approvers.length === 0 ? '' : ` (approved by ${approvers.map(deciderText).join(' and ')})`;
      revoke(call.approvalId, decision.userId, `fewer approvals than the rule requires${now}`, `it has fewer approvals than the rule requires${now}${by}`);
      continue;
    }
    toCheck.push({ approvalId: call.approvalId, governing, approvers });
  }
  const groupIdsOf = (governing: GoverningPolicy) => [...new Set(governingEvaluations(governing).flatMap(approverGroupIds))];
  // One read per group for the whole step, whatever number of calls name it.
  const groupIds = [...new Set(toCheck.flatMap(({ governing }) => groupIdsOf(governing)))];
  const groupMembers = groupIds.length === 0 ? new Map() : await options.resolveGroups(groupIds, { fresh: true });
  for (const { approvalId, governing, approvers } of toCheck) {
    const refusals = approvers.flatMap((userId) => {
      const authorization = authorizeGoverned({ governing, userId, requesterId: step.requesterId, instigatorIds: step.instigatorIds, groupMembers, approvedBy: [] });
      return authorization.allowed ? [] : [{ userId, ...authorization }];
    });
    // A definite refusal settles it; only when every doubt is an unread group does the call wait.
    const refused = refusals.find((refusal) => refusal.code !== 'groups-unresolved');
    if (refused) {
      revoke(approvalId, refused.userId, refused.reason, `the approval by <@${refused.userId}> no longer holds (${refused.reason.replace(/^You /, 'they ')})`);
    } else if (refusals.length > 0) {
      unchecked.push({ approvalId, groupIds: groupIdsOf(governing).filter((groupId) => !groupMembers.has(groupId)) });
    }
  }
  return { step: revoked.length === 0 ? step : { ...step, decisions }, revoked, unchecked };
}

/**
 * Why a hook's approval no longer holds, or undefined while it does: the hook is asked only when
 * configured and may approve only what its rule lets it (`ruleLetsHookApprove`), and at resume
 * that is asked again, of the card's policy and of the config in force. A hook removed or renamed
 * by a deploy is not the one in force, whatever it decided before.
 */
function hookApprovalLapse({ hookName, hookInForce, governing }: { hookName: string; hookInForce: string | undefined; governing: GoverningPolicy }): string | undefined {
  if (hookInForce === undefined) return 'no approval hook is configured now';
  if (hookInForce !== hookName) return `the approval hook configured now is ${hookInForce}, not ${hookName}`;
  if (!ruleLetsHookApprove(governing.stored)) return 'the policy rule forbids automatic approval of this tool';
  if (governing.current !== undefined && !ruleLetsHookApprove(governing.current)) return `the policy rule forbids automatic approval of this tool ${POLICY_CHANGED_TEXT}`;
  return undefined;
}

/** An approval that held when it was given and no longer does at resume: closed in the claim (or its recovery), audited in the approver's name. */
export function revocationEvent(step: PendingStep, revocation: Revocation): AuditEventInput {
  const call = step.calls.find((candidate) => candidate.approvalId === revocation.approvalId);
  return { type: 'action-refused', teamId: step.teamId, channel: step.channel, stepId: step.stepId, approvalId: revocation.approvalId, toolName: call?.toolName ?? 'unknown', userId: revocation.userId, action: 'resume', code: 'approval-revoked', reason: revocation.reason };
}
