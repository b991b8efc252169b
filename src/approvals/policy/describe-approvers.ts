import { approverKey, type ApproverSpec } from '../../config/policy-config-schema.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/**
 * Who can approve, for the card: `<@U0ALICE>, <!subteam^S0ONCALL> or the requester · 2 approvals
 * needed`. Mentions notify when first posted, which is what a card waiting on those people wants.
 */
export function describeApprovers(evaluation: PolicyEvaluation): string {
  if (!evaluation.needsApproval) return 'No approval needed';
  const own = capitalize(joinWithOr(evaluation.approvers.map((approver) => approverPhrase({ approver, evaluation, membersOf: false }))));
  const also = narrowing(evaluation);
  const who = also.length > 0 ? `${own}, who must also be ${alsoPhrase(also)} (the input may fall under more than one rule)` : own;
  return evaluation.required > 1 ? `${who} · ${evaluation.required} approvals needed` : who;
}

/**
 * `<@U0ALICE>, members of <!subteam^S0ONCALL> or the requester`: the subject of "… can approve this".
 * For an input that may fall under several rules, `someone who is <@U0DEVLEAD> and also <@U0SRE>`.
 */
export function whoCanApprove(evaluation: PolicyEvaluation): string {
  const also = narrowing(evaluation);
  if (also.length > 0) return `someone who is ${oneOf(evaluation.approvers)} and also ${alsoPhrase(also)}`;
  return joinWithOr(evaluation.approvers.map((approver) => approverPhrase({ approver, evaluation, membersOf: true })));
}

/**
 * The other rules' approver lists (`alsoApprovers`) that leave out someone `approvers` names: worth
 * saying. One that lets anyone in the channel approve, or names all of them, changes nobody's standing.
 */
function narrowing(evaluation: PolicyEvaluation): ApproverSpec[][] {
  return (evaluation.alsoApprovers ?? []).filter((list) => {
    const keys = new Set(list.map(approverKey));
    return !keys.has('channel') && evaluation.approvers.some((approver) => !keys.has(approverKey(approver)));
  });
}

/** Lists of approvers, as `<@U0SRE> or in <!subteam^S0SRE> and also …`. */
function alsoPhrase(lists: readonly ApproverSpec[][]): string {
  return lists.map(oneOf).join(' and also ');
}

/** Who a person must be to be among `approvers`: `<@U0SRE>, in <!subteam^S0SRE> or the requester`. */
function oneOf(approvers: readonly ApproverSpec[]): string {
  return joinWithOr(approvers.map(personPhrase));
}

function personPhrase(approver: ApproverSpec): string {
  switch (approver.kind) {
    case 'user':
      return `<@${approver.userId}>`;
    case 'group':
      return `in <!subteam^${approver.groupId}>`;
    case 'requester':
      return 'the requester';
    case 'channel':
      return 'in the channel';
  }
}

/**
 * The mentions for a reminder in the thread: named approvers who have not approved yet, their
 * groups, and the requester when they may approve. Empty when anyone in the channel may approve:
 * pinging the whole channel would be noise, so the reminder then goes out without mentions.
 */
export function reminderMentions({
  evaluation,
  requesterId,
  approvedBy,
}: {
  evaluation: PolicyEvaluation;
  requesterId: string;
  approvedBy: readonly string[];
}): string {
  const mentions = evaluation.approvers.flatMap((approver) => {
    if (approver.kind === 'group') return [`<!subteam^${approver.groupId}>`];
    const userId = approver.kind === 'user' ? approver.userId : approver.kind === 'requester' ? requesterId : undefined;
    if (userId === undefined || approvedBy.includes(userId)) return [];
    if (userId === requesterId && !evaluation.allowSelfApproval) return [];
    return [`<@${userId}>`];
  });
  return [...new Set(mentions)].join(' ');
}

/** Mentions of named approvers (users and groups), for a notice meant to reach them. */
export function approverMentions(approvers: ReadonlyArray<Extract<ApproverSpec, { kind: 'user' | 'group' }>>): string {
  return approvers.map((approver) => (approver.kind === 'user' ? `<@${approver.userId}>` : `<!subteam^${approver.groupId}>`)).join(' ');
}

function approverPhrase({ approver, evaluation, membersOf }: { approver: ApproverSpec; evaluation: PolicyEvaluation; membersOf: boolean }): string {
  switch (approver.kind) {
    case 'user':
      return `<@${approver.userId}>`;
    case 'group':
      return membersOf ? `members of <!subteam^${approver.groupId}>` : `<!subteam^${approver.groupId}>`;
    case 'requester':
      return 'the requester';
    case 'channel':
      return evaluation.allowSelfApproval ? 'anyone in the channel' : 'anyone in the channel except the requester';
  }
}

function joinWithOr(phrases: readonly string[]): string {
  if (phrases.length <= 1) return phrases.join('');
  return `${phrases.slice(0, -1).join(', ')} or ${phrases.at(-1) ?? ''}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
