import { approverGroupIds, approverLists, combinesRules, type GroupMembers } from './approver-eligibility.js';
import { reminderMentions } from './describe-approvers.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { authorizeGoverned, governingEvaluations, type GoverningPolicy } from './governing-policy.js';

/** Every user group a governing policy names: what to resolve before `governedReminderMentions`. */
export function reminderGroupIds(governing: GoverningPolicy): string[] {
  if (byCardAlone(governing)) return [];
  return [...new Set(governingEvaluations(governing).flatMap(approverGroupIds))];
}

/**
 * The mentions for a reminder about a call waiting under `governing`: the people a click would
 * accept now, the card's policy and the config in force's together (`authorizeGoverned`), as App
 * Home lists the call. Where the config in force says what the card said, the card's approvers
 * (`reminderMentions`), unless the card's input may fall under several rules (`alsoApprovers`): a
 * person must then be an approver under each. Otherwise a group is mentioned only where every list
 * of every policy lets all its members approve (each names it, or lets anyone in the channel
 * approve), and anyone else by name when all of them let them approve: users any policy names, the
 * requester where one names them, and members of the other groups named (`groupMembers`, resolved
 * beforehand; a group not resolved gives nobody, as a click would be refused until it is). A
 * deploy that took someone off the rule stops their pings; one that named someone out of the card's
 * group or channel pings them. Nobody who already approved this version, and no mention where
 * anyone in the channel may approve. Pure.
 */
export function governedReminderMentions({
  governing,
  requesterId,
  instigatorIds = [],
  approvedBy,
  groupMembers,
}: {
  governing: GoverningPolicy;
  requesterId: string;
  instigatorIds?: readonly string[];
  approvedBy: readonly string[];
  groupMembers: GroupMembers;
}): string[] {
  if (byCardAlone(governing)) return reminderMentions({ evaluation: governing.stored, requesterId, approvedBy }).split(' ').filter(Boolean);
  const evaluations = governingEvaluations(governing);
  const wholeGroups = reminderGroupIds(governing).filter((groupId) => evaluations.every((evaluation) => letsEveryMemberApprove(evaluation, groupId)));
  const candidates = new Set(
    evaluations.flatMap((evaluation) =>
      approverLists(evaluation).flat().flatMap((approver) => {
        if (approver.kind === 'user') return [approver.userId];
        if (approver.kind === 'requester') return [requesterId];
        if (approver.kind === 'group' && !wholeGroups.includes(approver.groupId)) return [...(groupMembers.get(approver.groupId) ?? [])];
        return [];
      }),
    ),
  );
  const named = [...candidates].filter((userId) => authorizeGoverned({ governing, userId, requesterId, instigatorIds, groupMembers, approvedBy }).allowed);
  return [...wholeGroups.map((groupId) => `<!subteam^${groupId}>`), ...named.map((userId) => `<@${userId}>`)];
}

/** The card's approvers are the ones to mention: the config in force says what it said, of one rule. */
function byCardAlone(governing: GoverningPolicy): boolean {
  return governing.current === undefined && !combinesRules(governing.stored);
}

function letsEveryMemberApprove(evaluation: PolicyEvaluation, groupId: string): boolean {
  return approverLists(evaluation).every((list) => list.some((approver) => approver.kind === 'channel' || (approver.kind === 'group' && approver.groupId === groupId)));
}
