import { describe, expect, it } from 'vitest';
import { evaluation, makeStep } from '../pending-step.test-support.js';
import { governedReminderMentions } from './governed-reminder-mentions.js';
import { governingPolicy } from './governing-policy.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

const step = makeStep(['apv-1']);
const groupMembers = new Map([
  ['S0ONCALL', new Set(['U0BOB', 'U0CAROL', 'U0ALICE'])],
  ['S0SRE', new Set(['U0CAROL', 'U0DAVE'])],
]);

function mentions(stored: PolicyEvaluation, current: PolicyEvaluation | undefined, { approvedBy = [] as string[], instigatorIds = [] as string[] } = {}) {
  const governing = governingPolicy({ step, stored, current });
  return governedReminderMentions({ governing, requesterId: 'U0ALICE', instigatorIds, approvedBy, groupMembers }).sort();
}

describe('who a reminder pings under the governing policy', () => {
  it("is the card's approvers while the config in force says the same", () => {
    const policy = evaluation({ rule: { index: 0, fingerprint: 'a' }, approvers: [{ kind: 'user', userId: 'U0BOB' }, { kind: 'group', groupId: 'S0ONCALL' }] });
    expect(mentions(policy, policy)).toEqual(['<!subteam^S0ONCALL>', '<@U0BOB>']);
    expect(mentions(policy, undefined, { approvedBy: ['U0BOB'] })).toEqual(['<!subteam^S0ONCALL>']);
  });

  it('is whoever both policies let approve after a deploy: a removed approver is not pinged, an added one only where the card lets them approve too', () => {
    const stored = evaluation({ rule: { index: 0, fingerprint: 'old' }, approvers: [{ kind: 'user', userId: 'U0OLD' }, { kind: 'group', groupId: 'S0ONCALL' }] });
    const current = evaluation({ rule: { index: 0, fingerprint: 'new' }, approvers: [{ kind: 'user', userId: 'U0BOB' }, { kind: 'user', userId: 'U0NEW' }] });
    expect(mentions(stored, current)).toEqual(['<@U0BOB>']);
  });

  it('names the members of two different groups who are in both, and never the requester under a self-approval ban, an instigator or someone who approved', () => {
    const stored = evaluation({ rule: { index: 0, fingerprint: 'old' }, approvers: [{ kind: 'group', groupId: 'S0ONCALL' }] });
    const current = evaluation({ rule: { index: 0, fingerprint: 'new' }, approvers: [{ kind: 'group', groupId: 'S0SRE' }, { kind: 'user', userId: 'U0ALICE' }, { kind: 'user', userId: 'U0BOB' }] });
    expect(mentions(stored, current)).toEqual(['<@U0BOB>', '<@U0CAROL>']);
    expect(mentions(stored, current, { approvedBy: ['U0CAROL'], instigatorIds: ['U0BOB'] })).toEqual([]);
  });

  it('keeps a group both let approve whole, and pings nobody where both let anyone in the channel approve', () => {
    const channel = evaluation({ rule: { index: 0, fingerprint: 'old' }, approvers: [{ kind: 'channel' }] });
    expect(mentions(channel, evaluation({ rule: { index: 0, fingerprint: 'new' }, approvers: [{ kind: 'group', groupId: 'S0SRE' }] }))).toEqual(['<!subteam^S0SRE>']);
    expect(mentions(channel, evaluation({ rule: { index: 0, fingerprint: 'new' }, approvers: [{ kind: 'channel' }], required: 2 }))).toEqual([]);
  });
});
