import { approverEligibility, type GroupMembers } from './approver-eligibility.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { governingEvaluations, type GoverningPolicy } from './governing-policy.js';

/**
 * Whether enough people could still approve under every policy of `governing` to reach its quorum.
 * After a deploy that replaced a rule's approvers (prod restarts: Bob → the lead), nobody the card
 * names is let approve by the config in force and nobody the config names by the card: the card
 * would wait, undecidable, until it expires. Counted from the people the policies name: users, the
 * requester, and the members of their groups as read for the click. Where that cannot be known (a
 * group not read, or every policy lets anyone in the channel approve), it is reachable: countersign
 * closes a call only on a certainty, never on a doubt.
 */
export function quorumReachable({
  governing,
  requesterId,
  instigatorIds = [],
  groupMembers,
}: {
  governing: GoverningPolicy;
  requesterId: string;
  /** People who answered a question that led to the call: like the requester under a self-approval ban. */
  instigatorIds?: readonly string[];
  groupMembers: GroupMembers;
}): boolean {
  // The card's policy alone is what the card showed: not this check's business.
  if (governing.current === undefined) return true;
  const evaluations = governingEvaluations(governing);
  if (evaluations.every((evaluation) => evaluation.approvers.some((approver) => approver.kind === 'channel'))) return true;
  const candidates = namedPeople({ evaluations, requesterId, groupMembers });
  if (candidates === undefined) return true;
  const eligible = [...candidates].filter((userId) =>
    evaluations.every((evaluation) => approverEligibility({ evaluation, userId, requesterId, instigatorIds, groupMembers }).eligible),
  );
  return eligible.length >= governing.required;
}

/**
 * Everyone the policies name, group members included; undefined when a group was not read. Anyone
 * let approve by every policy is among them: at least one policy names no `channel`, so whoever it
 * lets approve, it names.
 */
function namedPeople({ evaluations, requesterId, groupMembers }: { evaluations: readonly PolicyEvaluation[]; requesterId: string; groupMembers: GroupMembers }): Set<string> | undefined {
  const people = new Set<string>();
  for (const approver of evaluations.flatMap((evaluation) => evaluation.approvers)) {
    if (approver.kind === 'user') people.add(approver.userId);
    else if (approver.kind === 'requester') people.add(requesterId);
    else if (approver.kind === 'group') {
      const members = groupMembers.get(approver.groupId);
      if (members === undefined) return undefined;
      for (const member of members) people.add(member);
    }
  }
  return people;
}
