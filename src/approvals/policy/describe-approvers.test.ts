import { describe, expect, it } from 'vitest';
import type { ApproverSpec } from '../../config/policy-config-schema.js';
import { describeApprovers, reminderMentions } from './describe-approvers.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

const ALICE: ApproverSpec = { kind: 'user', userId: 'U0ALICE' };
const BOB: ApproverSpec = { kind: 'user', userId: 'U0BOB' };
const ONCALL: ApproverSpec = { kind: 'group', groupId: 'S0ONCALL' };

function evaluation(overrides: Partial<PolicyEvaluation>): PolicyEvaluation {
  return {
    rule: undefined,
    needsApproval: true,
    approvers: [{ kind: 'channel' }],
    required: 1,
    allowSelfApproval: true,
    expiryMs: 86_400_000,
    onExpiry: 'stop',
    autoApprove: 'allowed',
    grants: 'allowed',
    ...overrides,
  };
}

describe('describeApprovers', () => {
  it.each([
    [{}, 'Anyone in the channel'],
    [{ allowSelfApproval: false }, 'Anyone in the channel except the requester'],
    [{ approvers: [ALICE] }, '<@U0ALICE>'],
    [{ approvers: [ALICE, ONCALL, { kind: 'requester' }], required: 2 }, '<@U0ALICE>, <!subteam^S0ONCALL> or the requester · 2 approvals needed'],
    [{ approvers: [{ kind: 'requester' }] }, 'The requester'],
    [{ needsApproval: false }, 'No approval needed'],
  ] satisfies [Partial<PolicyEvaluation>, string][])('describes %j as %s', (overrides, expected) => {
    expect(describeApprovers(evaluation(overrides))).toBe(expected);
  });
});

describe('reminderMentions', () => {
  it.each([
    ['named approvers and their groups', { approvers: [ALICE, BOB, ONCALL] }, [], '<@U0ALICE> <@U0BOB> <!subteam^S0ONCALL>'],
    ['only those who have not approved yet', { approvers: [ALICE, BOB], required: 2 }, ['U0ALICE'], '<@U0BOB>'],
    ['the requester when they may approve', { approvers: [{ kind: 'requester' }, ONCALL] }, [], '<@U0REQ> <!subteam^S0ONCALL>'],
    ['not the requester when they may not', { approvers: [ALICE, { kind: 'user', userId: 'U0REQ' }], allowSelfApproval: false }, [], '<@U0ALICE>'],
    ['nobody for the whole channel', {}, [], ''],
  ] satisfies [string, Partial<PolicyEvaluation>, string[], string][])('mentions %s', (_case, overrides, approvedBy, expected) => {
    expect(reminderMentions({ evaluation: evaluation(overrides), requesterId: 'U0REQ', approvedBy })).toBe(expected);
  });
});
