import type { ApproverSpec } from '../../config/policy-config-schema.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/**
 * Who can approve, for the card: `<@U0ALICE>, <!subteam^S0ONCALL> or the requester · 2 approvals
 * needed`. Mentions notify when first posted, which is what a card waiting on those people wants.
 */
export function describeApprovers(evaluation: PolicyEvaluation): string {
  if (!evaluation.needsApproval) return 'No approval needed';
  const who = capitalize(joinWithOr(evaluation.approvers.map((approver) => approverPhrase({ approver, evaluation, membersOf: false }))));
  return evaluation.required > 1 ? `${who} · ${evaluation.required} approvals needed` : who;
}

/** `<@U0ALICE>, members of <!subteam^S0ONCALL> or the requester`: the subject of "… can approve this". */
export function whoCanApprove(evaluation: PolicyEvaluation): string {
  return joinWithOr(evaluation.approvers.map((approver) => approverPhrase({ approver, evaluation, membersOf: true })));
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
