import type { PendingStep } from '../pending-step.js';
import { approverEligibility, approverLists, combinesRules, type GroupMembers } from './approver-eligibility.js';
import { withEscalationSoFar } from './escalated-approvers.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { governingEvaluations, governingPolicy, type GoverningPolicy } from './governing-policy.js';

/** What `quorumReachable` reads of a step: its ladder and how far it got, and when it expires. */
export type LadderProgress = Pick<PendingStep, 'escalation' | 'calls' | 'createdAt' | 'expiresAt'>;

/**
 * Whether enough people could still approve a waiting version, under both its stored policy and the
 * config in force's evaluation of its input (`governingPolicy`), to reach the governing quorum; and,
 * where its input may fall under several rules, under each of them (`alsoApprovers`): with a rule
 * for SRE and one for the dev lead, a list with dev and prod can be approved by nobody. After
 * a deploy that replaced a rule's approvers (prod restarts: Bob → the lead), nobody the card names is
 * let approve by the config in force and nobody the config names by the card: the card would wait,
 * undecidable, until it expires. Counted from the people the policies name: users, the requester,
 * and the members of their groups as read for the click. Where that cannot be known (a group not
 * read, or every policy lets anyone in the channel approve), it is reachable: countersign closes a
 * call only on a certainty, never on a doubt.
 *
 * Judged as the card will stand after every hop of its ladder still to come before it expires: a
 * hop that will add the lead to the card's policy makes the lead an approver under both, so a card
 * posted for Bob with the lead as the fallback, after a deploy that gave the rule to the lead, is
 * decidable in 25 minutes, not undecidable now.
 */
export function quorumReachable({
  step,
  stored,
  current,
  requesterId,
  instigatorIds = [],
  groupMembers,
}: {
  step: LadderProgress;
  /** The waiting version's policy, with the hops made so far. */
  stored: PolicyEvaluation;
  /** The config in force's evaluation of the version's input. */
  current: PolicyEvaluation | undefined;
  requesterId: string;
  /** People whose answer or deny reason led to the call: like the requester under a self-approval ban. */
  instigatorIds?: readonly string[];
  groupMembers: GroupMembers;
}): boolean {
  const governing = governingAfterRemainingHops({ step, stored, current });
  // The card's policy of one rule alone is what the card showed, and the config loader made sure
  // its approvers can meet its quorum: not this check's business. A combination of rules is.
  if (governing.current === undefined && !combinesRules(governing.stored)) return true;
  const evaluations = governingEvaluations(governing);
  if (evaluations.every((evaluation) => approverLists(evaluation).every((list) => list.some((approver) => approver.kind === 'channel')))) return true;
  const candidates = namedPeople({ evaluations, requesterId, groupMembers });
  if (candidates === undefined) return true;
  const eligible = [...candidates].filter((userId) =>
    evaluations.every((evaluation) => approverEligibility({ evaluation, userId, requesterId, instigatorIds, groupMembers }).eligible),
  );
  return eligible.length >= governing.required;
}

/**
 * The governing policy once every hop still to come has been made: the hops add their approvers to
 * the stored policy where the version is under the ladder's rule (as the sweep will), and to the
 * config in force's only where it keeps them (`governingPolicy`'s rule for the hops so far). Hops
 * only add approvers, so whoever can approve now can then too: reachable then is the weaker claim,
 * and unreachable then is unreachable for good.
 */
function governingAfterRemainingHops({ step, stored, current }: { step: LadderProgress; stored: PolicyEvaluation; current: PolicyEvaluation | undefined }): GoverningPolicy {
  const { escalation } = step;
  const reached = escalation === undefined ? 0 : hopsBeforeExpiry(step);
  if (escalation === undefined || reached === escalation.done) return governingPolicy({ step, stored, current });
  const escalated = { ...step, escalation: { ...escalation, done: reached } };
  return governingPolicy({ step: escalated, stored: withEscalationSoFar({ evaluation: stored, step: escalated }), current });
}

/**
 * How many hops of the ladder will have been made when the step expires: those made, and each next
 * one due before the expiry (a hop at or after it never comes, and the ones after it wait for it).
 * The next hop's time is the step's `nextAt`, which an edit that brought the expiry forward removes.
 */
function hopsBeforeExpiry({ escalation, createdAt, expiresAt }: LadderProgress): number {
  if (escalation === undefined) return 0;
  let reached = escalation.done;
  let dueAt = escalation.nextAt;
  while (reached < escalation.ladder.length && dueAt !== undefined && (expiresAt === undefined || dueAt < expiresAt)) {
    reached += 1;
    const following = escalation.ladder[reached];
    dueAt = following === undefined ? undefined : createdAt + following.afterMs;
  }
  return reached;
}

/**
 * Everyone the policies name, group members included; undefined when a group was not read (a hop's
 * group too: the click reads only the groups the card names so far). Anyone let approve by every
 * policy is among them: at least one list of approvers names no `channel`, so whoever it lets
 * approve, it names.
 */
function namedPeople({ evaluations, requesterId, groupMembers }: { evaluations: readonly PolicyEvaluation[]; requesterId: string; groupMembers: GroupMembers }): Set<string> | undefined {
  const people = new Set<string>();
  for (const approver of evaluations.flatMap((evaluation) => approverLists(evaluation).flat())) {
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
