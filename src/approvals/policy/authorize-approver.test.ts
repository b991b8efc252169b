import { describe, expect, it } from 'vitest';
import type { ApproverSpec } from '../../config/policy-config-schema.js';
import { approverGroupIds } from './approver-eligibility.js';
import { authorizeApprover, type ApproverAction } from './authorize-approver.js';
import type { PolicyEvaluation } from './evaluate-policy.js';
import { quorumStatus } from './quorum-status.js';

const ALICE: ApproverSpec = { kind: 'user', userId: 'U0ALICE' };
const ONCALL: ApproverSpec = { kind: 'group', groupId: 'S0ONCALL' };
const REQUESTER: ApproverSpec = { kind: 'requester' };
const CHANNEL: ApproverSpec = { kind: 'channel' };

function evaluation(overrides: Partial<PolicyEvaluation>): PolicyEvaluation {
  const approvers = overrides.approvers ?? [CHANNEL];
  return {
    rule: { index: 0 },
    needsApproval: true,
    approvers,
    required: 1,
    allowSelfApproval: approvers.some((approver) => approver.kind === 'channel' || approver.kind === 'requester'),
    expiryMs: 86_400_000,
    onExpiry: 'stop',
    autoApprove: 'allowed',
    grants: 'allowed',
    ...overrides,
  };
}

const ONCALL_MEMBERS = new Map([['S0ONCALL', new Set(['U0CAROL', 'U0REQ'])]]);

interface Click {
  evaluation: PolicyEvaluation;
  userId: string;
  requesterId?: string;
  instigatorIds?: string[];
  groupMembers?: ReadonlyMap<string, ReadonlySet<string>>;
  approvedBy?: string[];
  action?: ApproverAction;
}

const authorize = ({ evaluation, userId, requesterId = 'U0REQ', instigatorIds = [], groupMembers = ONCALL_MEMBERS, approvedBy = [], action }: Click) =>
  authorizeApprover({ evaluation, userId, requesterId, instigatorIds, groupMembers, approvedBy, ...(action === undefined ? {} : { action }) });

const allowed = { allowed: true };
const refused = (reason: string) => ({ allowed: false, reason });

describe('authorizeApprover', () => {
  it.each<[string, Click, object]>([
    ['a named approver', { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0ALICE' }, allowed],
    ['someone not named', { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0MALLORY' }, refused('Only <@U0ALICE> can approve this')],
    ['a group member', { evaluation: evaluation({ approvers: [ONCALL] }), userId: 'U0CAROL' }, allowed],
    ['someone outside the group', { evaluation: evaluation({ approvers: [ONCALL] }), userId: 'U0MALLORY' }, refused('Only members of <!subteam^S0ONCALL> can approve this')],
    [
      'anyone while the group could not be resolved',
      { evaluation: evaluation({ approvers: [ONCALL] }), userId: 'U0CAROL', groupMembers: new Map() },
      refused('Could not check who is in <!subteam^S0ONCALL> just now; try again in a minute'),
    ],
    ['a named user while their group could not be resolved', { evaluation: evaluation({ approvers: [ALICE, ONCALL] }), userId: 'U0ALICE', groupMembers: new Map() }, allowed],
    [
      'an outsider when several kinds are named',
      { evaluation: evaluation({ approvers: [ALICE, ONCALL, REQUESTER] }), userId: 'U0MALLORY' },
      refused('Only <@U0ALICE>, members of <!subteam^S0ONCALL> or the requester can approve this'),
    ],
    ['the requester when requester is named', { evaluation: evaluation({ approvers: [REQUESTER] }), userId: 'U0REQ' }, allowed],
    ['someone else when only the requester is named', { evaluation: evaluation({ approvers: [REQUESTER] }), userId: 'U0ALICE' }, refused('Only the requester can approve this')],
    ['anyone in the channel by default', { evaluation: evaluation({}), userId: 'U0MALLORY' }, allowed],
    ['the requester by default', { evaluation: evaluation({}), userId: 'U0REQ' }, allowed],
    [
      'the requester when the channel may approve but not themselves',
      { evaluation: evaluation({ allowSelfApproval: false }), userId: 'U0REQ' },
      refused('You asked for this, so someone else must approve it'),
    ],
    ['another member when the channel may approve but not the requester', { evaluation: evaluation({ allowSelfApproval: false }), userId: 'U0ALICE' }, allowed],
    [
      'a named approver approving their own request',
      { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0ALICE', requesterId: 'U0ALICE' },
      refused('You asked for this, so someone else must approve it'),
    ],
    [
      'a group member approving their own request',
      { evaluation: evaluation({ approvers: [ONCALL] }), userId: 'U0REQ' },
      refused('You asked for this, so someone else must approve it'),
    ],
    [
      'a group member approving their own request where self-approval is allowed',
      { evaluation: evaluation({ approvers: [ONCALL], allowSelfApproval: true }), userId: 'U0REQ' },
      allowed,
    ],
    [
      'a second click by the same approver',
      { evaluation: evaluation({ approvers: [ALICE, ONCALL], required: 2 }), userId: 'U0ALICE', approvedBy: ['U0ALICE'] },
      refused('You already approved this; it needs 1 more approver'),
    ],
    [
      'a second click under a larger quorum',
      { evaluation: evaluation({ approvers: [ONCALL, ALICE], required: 3 }), userId: 'U0ALICE', approvedBy: ['U0ALICE'] },
      refused('You already approved this; it needs 2 more approvers'),
    ],
    ['a second, different approver', { evaluation: evaluation({ approvers: [ALICE, ONCALL], required: 2 }), userId: 'U0CAROL', approvedBy: ['U0ALICE'] }, allowed],
    [
      'someone who answered the question that led to the call, when the channel may approve but not themselves',
      { evaluation: evaluation({ allowSelfApproval: false }), userId: 'U0ALICE', requesterId: 'schedule:heartbeat', instigatorIds: ['U0ALICE'] },
      { ...refused('You wrote the answer or deny reason that led to this request, and this rule needs someone else to approve it'), code: 'self-approval' },
    ],
    [
      'a named approver who answered the question that led to the call',
      { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0ALICE', instigatorIds: ['U0ALICE'] },
      refused('You wrote the answer or deny reason that led to this request, and this rule needs someone else to approve it'),
    ],
    [
      'someone else in the channel while another person answered the question',
      { evaluation: evaluation({ allowSelfApproval: false }), userId: 'U0CAROL', requesterId: 'schedule:heartbeat', instigatorIds: ['U0ALICE'] },
      allowed,
    ],
    [
      'someone who answered the question, where self-approval is allowed',
      { evaluation: evaluation({ allowSelfApproval: true }), userId: 'U0ALICE', requesterId: 'schedule:heartbeat', instigatorIds: ['U0ALICE'] },
      allowed,
    ],
  ])('approve: %s', (_case, click, expected) => {
    expect(authorize(click)).toMatchObject(expected);
  });

  it.each<[string, Click, object]>([
    ['someone not named', { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0MALLORY', action: 'deny' }, refused('Only <@U0ALICE> can deny this')],
    ['a named approver', { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0ALICE', action: 'deny' }, allowed],
    ['the requester withdrawing a request they may not approve', { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0REQ', action: 'deny' }, allowed],
    [
      'an approver changing their mind before the quorum is reached',
      { evaluation: evaluation({ approvers: [ALICE, ONCALL], required: 2 }), userId: 'U0ALICE', approvedBy: ['U0ALICE'], action: 'deny' },
      allowed,
    ],
    ['anyone in the channel by default', { evaluation: evaluation({}), userId: 'U0MALLORY', action: 'deny' }, allowed],
    [
      'someone withdrawing what their answer to the question asked for',
      { evaluation: evaluation({ approvers: [ALICE] }), userId: 'U0DAVE', instigatorIds: ['U0DAVE'], action: 'deny' },
      allowed,
    ],
  ])('deny: %s', (_case, click, expected) => {
    expect(authorize(click)).toMatchObject(expected);
  });
});

describe('quorumStatus', () => {
  const twoOfOncall = evaluation({ approvers: [ALICE, ONCALL], required: 2 });
  const status = (approvedBy: string[], groupMembers: ReadonlyMap<string, ReadonlySet<string>> = ONCALL_MEMBERS) =>
    quorumStatus({ evaluation: twoOfOncall, approvedBy, requesterId: 'U0REQ', groupMembers });

  it.each([
    ['nobody yet', [], { approvals: 0, remaining: 2, reached: false }],
    ['one approver', ['U0ALICE'], { approvals: 1, remaining: 1, reached: false }],
    ['the same approver twice', ['U0ALICE', 'U0ALICE'], { approvals: 1, remaining: 1, reached: false }],
    ['two distinct approvers', ['U0ALICE', 'U0CAROL'], { approvals: 2, remaining: 0, reached: true }],
    ['the requester, who may not count', ['U0ALICE', 'U0REQ'], { approvals: 1, remaining: 1, reached: false }],
    ['someone who was never an approver', ['U0ALICE', 'U0MALLORY'], { approvals: 1, remaining: 1, reached: false }],
  ])('counts %s', (_case, approvedBy, expected) => {
    expect(status(approvedBy)).toEqual(expected);
  });

  it('stops counting an approver who left the group before the call runs', () => {
    expect(status(['U0ALICE', 'U0CAROL'], new Map([['S0ONCALL', new Set(['U0DAVE'])]]))).toMatchObject({ approvals: 1, reached: false });
  });
});

describe('approverGroupIds', () => {
  it('lists each group to resolve once', () => {
    expect(approverGroupIds(evaluation({ approvers: [ALICE, ONCALL, { kind: 'group', groupId: 'S0DBA' }] }))).toEqual(['S0ONCALL', 'S0DBA']);
    expect(approverGroupIds(evaluation({}))).toEqual([]);
  });
});

describe('a click on a copy outside the thread', () => {
  const onCopy = { channel: 'C0OPS', clickedThere: false };
  const inThread = { channel: 'C0OPS', clickedThere: true };
  const judge = (userId: string, approvers: ApproverSpec[], thread: { channel: string; clickedThere: boolean }) =>
    authorizeApprover({ evaluation: evaluation({ approvers }), userId, requesterId: 'U0REQ', groupMembers: ONCALL_MEMBERS, approvedBy: [], thread });

  it('does not count as a click by someone in the thread channel', () => {
    expect(judge('U0DAVE', [CHANNEL], inThread)).toEqual({ allowed: true });
    expect(judge('U0DAVE', [CHANNEL], onCopy)).toMatchObject({ allowed: false, code: 'not-eligible', reason: 'Only people in <#C0OPS> can approve this, from the thread there' });
  });

  it('still lets named approvers (an escalation may add them beside the channel) decide from the copy', () => {
    expect(judge('U0CAROL', [CHANNEL, ONCALL], onCopy)).toEqual({ allowed: true });
    expect(judge('U0DAVE', [CHANNEL, ONCALL], onCopy)).toMatchObject({
      allowed: false,
      reason: 'Only people in <#C0OPS> can approve this, from the thread there, or members of <!subteam^S0ONCALL> from here',
    });
    expect(judge('U0ALICE', [ALICE], onCopy)).toEqual({ allowed: true });
  });
});
