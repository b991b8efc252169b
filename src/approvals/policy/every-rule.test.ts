import { describe, expect, it } from 'vitest';
import { evaluation } from '../pending-step.test-support.js';
import { approverEligibility } from './approver-eligibility.js';
import { withAddedApprovers } from './escalated-approvers.js';
import { underEveryRule } from './every-rule.js';
import { quorumReachable } from './quorum-reachable.js';

// The dev lead's rule is the more specific one, and neither names only people the other does; SRE's
// rule, which the input may also fall under, names someone else.
const devLead = (overrides: Parameters<typeof evaluation>[0] = {}) =>
  evaluation({ rule: { index: 1, name: 'dev', fingerprint: 'dev-print' }, approvers: [{ kind: 'user', userId: 'U0DEVLEAD' }], ...overrides });
const sre = (overrides: Parameters<typeof evaluation>[0] = {}) => evaluation({ rule: { index: 0, name: 'sre', fingerprint: 'sre-print' }, approvers: [{ kind: 'user', userId: 'U0SRE' }], ...overrides });
const combined = (chosen: ReturnType<typeof evaluation>, other: ReturnType<typeof evaluation>) => underEveryRule({ chosen, candidates: [chosen, other] });
const user = (userId: string) => ({ kind: 'user' as const, userId });
const group = (groupId: string) => ({ kind: 'group' as const, groupId });
const groupMembers = new Map([
  ['S0SRE', new Set(['U0SRE', 'U0BOTH'])],
  ['S0DEVLEADS', new Set(['U0DEVLEAD', 'U0BOTH'])],
  ['S0DEVS', new Set(['U0DEV', 'U0DEVLEAD', 'U0BOTH'])],
]);
const mayApprove = (policy: ReturnType<typeof evaluation>, userId: string) => approverEligibility({ evaluation: policy, userId, requesterId: 'U0ALICE', groupMembers }).eligible;

describe('underEveryRule: an input that may fall under several rules needs what every one of them asks', () => {
  it("lets approve only those each rule lets approve: the dev lead alone cannot approve what may be SRE's", () => {
    const result = combined(devLead({ approvers: [group('S0DEVLEADS')] }), sre({ approvers: [group('S0SRE')] }));
    expect(result.alsoApprovers).toEqual([[group('S0SRE')]]);
    expect(['U0DEVLEAD', 'U0SRE', 'U0BOTH'].filter((userId) => mayApprove(result, userId))).toEqual(['U0BOTH']);
  });

  it("carries every other rule's list, even one that already names everyone the chosen one does", () => {
    expect(combined(devLead(), sre({ approvers: [user('U0SRE'), user('U0DEVLEAD')] })).alsoApprovers).toEqual([[user('U0DEVLEAD'), user('U0SRE')]]);
    expect(combined(devLead(), sre({ approvers: [{ kind: 'channel' }] })).alsoApprovers).toEqual([[{ kind: 'channel' }]]);
    expect(mayApprove(combined(devLead(), sre({ approvers: [user('U0SRE'), user('U0DEVLEAD')] })), 'U0DEVLEAD')).toBe(true);
  });

  it("lets another rule's `channel` hold back nobody the chosen rule names, wherever they click, as for a clear input", () => {
    const result = combined(devLead(), sre({ approvers: [{ kind: 'channel' }], autoApprove: 'forbidden' }));
    expect(approverEligibility({ evaluation: result, userId: 'U0DEVLEAD', requesterId: 'U0ALICE', groupMembers, inThreadChannel: false }).eligible).toBe(true);
    expect(mayApprove(result, 'U0SRE')).toBe(false);
  });

  it("keeps a ladder's hops within the other rules", () => {
    const ladder = devLead({ approvers: [group('S0DEVLEADS')], escalation: [{ afterMs: 900_000, remind: false, addApprovers: [group('S0DEVS')] }] });
    const result = combined(ladder, sre({ approvers: [group('S0SRE')] }));
    const hopped = withAddedApprovers(result, [group('S0DEVS')]);
    expect(mayApprove(hopped, 'U0DEV')).toBe(false);
    expect(mayApprove(hopped, 'U0BOTH')).toBe(true);
  });

  it('forbids automatic approval when either rule does', () => {
    expect(combined(devLead(), sre({ autoApprove: 'forbidden' })).autoApprove).toBe('forbidden');
    expect(combined(devLead({ autoApprove: 'forbidden' }), sre()).autoApprove).toBe('forbidden');
    expect(combined(devLead(), sre()).autoApprove).toBe('allowed');
  });

  it.each([
    ['allowed', 'identicalArguments', 'identicalArguments'],
    ['identicalArguments', 'forbidden', 'forbidden'],
    ['allowed', 'forbidden', 'forbidden'],
    ['forbidden', 'allowed', 'forbidden'],
    ['identicalArguments', 'allowed', 'identicalArguments'],
  ] as const)('takes grants %s and %s as %s', (own, other, expected) => {
    expect(combined(devLead({ grants: own }), sre({ grants: other })).grants).toBe(expected);
  });

  it('bans self-approval when either rule does, even where one names the requester', () => {
    const anyone = { approvers: [{ kind: 'channel' as const }], allowSelfApproval: true };
    expect(combined(devLead(anyone), sre({ allowSelfApproval: false })).allowSelfApproval).toBe(false);
    expect(combined(devLead(anyone), sre({ allowSelfApproval: true })).allowSelfApproval).toBe(true);
    expect(combined(devLead({ approvers: [{ kind: 'requester' }], allowSelfApproval: true }), sre({ allowSelfApproval: false })).allowSelfApproval).toBe(false);
  });

  it('takes the larger quorum, whoever can meet it', () => {
    expect(combined(devLead({ approvers: [user('U0DEVLEAD'), user('U0QA')] }), sre({ required: 2 })).required).toBe(2);
    expect(combined(devLead({ approvers: [group('S0DEV')] }), sre({ required: 3 })).required).toBe(3);
    // One named person can never give two approvals: `quorumReachable` says nobody can approve it (below).
    expect(combined(devLead(), sre({ required: 2 })).required).toBe(2);
  });

  it('takes the shorter expiry, with a reminder that still comes before it', () => {
    const hour = 3_600_000;
    expect(combined(devLead({ expiryMs: 24 * hour }), sre({ expiryMs: 2 * hour })).expiryMs).toBe(2 * hour);
    expect(combined(devLead({ expiryMs: 2 * hour }), sre({ expiryMs: 24 * hour })).expiryMs).toBe(2 * hour);
    expect(combined(devLead({ expiryMs: 24 * hour, reminderMs: hour }), sre({ expiryMs: 2 * hour })).reminderMs).toBe(hour);
    expect(combined(devLead({ expiryMs: 24 * hour, reminderMs: 4 * hour }), sre({ expiryMs: 2 * hour, reminderMs: 30 * 60_000 })).reminderMs).toBe(30 * 60_000);
    expect(combined(devLead({ expiryMs: 24 * hour, reminderMs: 4 * hour }), sre({ expiryMs: 2 * hour }))).not.toHaveProperty('reminderMs');
  });

  it('keeps its own approvers, and all that holds nothing back, from the chosen rule', () => {
    const chosen = devLead({ onExpiry: 'continue', notify: { thread: true, channels: ['C0DEV'], dmApprovers: true }, escalation: [{ afterMs: 600_000, remind: true, addApprovers: [user('U0CTO')] }] });
    const result = combined(chosen, sre({ approvers: [user('U0SRE'), user('U0DEVLEAD'), user('U0CTO')], autoApprove: 'forbidden', onExpiry: 'stop', notify: { thread: true, channels: ['C0SRE'], dmApprovers: false } }));
    const { autoApprove: _autoApprove, rule: _rule, alsoApprovers: _also, ...rest } = result;
    const { autoApprove: _own, rule: _ownRule, ...chosenRest } = chosen;
    expect(rest).toEqual(chosenRest);
    expect(result.rule).toMatchObject({ index: 1, name: 'dev' });
  });

  it('names the combination, not the chosen rule alone, and each combination apart', () => {
    const chosen = devLead();
    const lax = combined(chosen, sre({ approvers: [{ kind: 'channel' }] }));
    expect(lax.rule?.fingerprint).not.toBe('dev-print');
    const forbidding = combined(chosen, sre({ approvers: [{ kind: 'channel' }], autoApprove: 'forbidden' }));
    expect(forbidding.rule?.fingerprint).not.toBe(lax.rule?.fingerprint);
    expect(combined(devLead(), sre({ approvers: [{ kind: 'channel' }], autoApprove: 'forbidden' })).rule?.fingerprint).toBe(forbidding.rule?.fingerprint);
    expect(combined(devLead(), sre({ approvers: [{ kind: 'channel' }], autoApprove: 'forbidden', grants: 'forbidden' })).rule?.fingerprint).not.toBe(forbidding.rule?.fingerprint);
    // Another rule's approvers are part of it: a grant given under the dev rule alone does not cover it.
    const withSre = combined(chosen, sre());
    expect(combined(chosen, sre({ approvers: [user('U0SRE2')] })).rule?.fingerprint).not.toBe(withSre.rule?.fingerprint);
    // Nor does the order the config file lists approvers in.
    const two = [user('U0SRE'), user('U0SRE2')];
    expect(combined(chosen, sre({ approvers: two })).rule?.fingerprint).toBe(combined(chosen, sre({ approvers: [...two].reverse() })).rule?.fingerprint);
  });

  it("is a combination nobody can approve where another rule's self-approval ban or quorum leaves too few people", () => {
    const step = { calls: [], createdAt: 0 };
    const reachable = (policy: ReturnType<typeof evaluation>) => quorumReachable({ step, stored: policy, current: undefined, requesterId: 'U0ALICE', groupMembers: new Map() });
    const requesterOnly = devLead({ approvers: [{ kind: 'requester' }], allowSelfApproval: true });
    expect(reachable(requesterOnly)).toBe(true);
    expect(reachable(combined(requesterOnly, sre({ approvers: [{ kind: 'channel' }], allowSelfApproval: false })))).toBe(false);
    expect(reachable(combined(devLead(), sre({ approvers: [{ kind: 'channel' }], required: 2 })))).toBe(false);
    expect(reachable(combined(devLead({ approvers: [user('U0DEVLEAD'), user('U0QA')] }), sre({ approvers: [{ kind: 'channel' }], required: 2 })))).toBe(true);
  });

  it('takes nothing from a rule that lets the call through unasked, nor adds to one that does', () => {
    const chosen = devLead();
    expect(combined(chosen, sre({ needsApproval: false, expiryMs: 60_000 }))).toBe(chosen);
    const unasked = devLead({ needsApproval: false });
    expect(combined(unasked, sre({ autoApprove: 'forbidden' }))).toBe(unasked);
  });
});
