import { describe, expect, it } from 'vitest';
import { evaluation } from '../pending-step.test-support.js';
import { withStrictestLimits } from './strictest-limits.js';

// The dev lead's rule decides who approves (the more specific one, neither being stricter); SRE's
// rule, which the input may also fall under, names someone else.
const devLead = (overrides: Parameters<typeof evaluation>[0] = {}) =>
  evaluation({ rule: { index: 1, name: 'dev', fingerprint: 'dev-print' }, approvers: [{ kind: 'user', userId: 'U0DEVLEAD' }], ...overrides });
const sre = (overrides: Parameters<typeof evaluation>[0] = {}) => evaluation({ rule: { index: 0, name: 'sre', fingerprint: 'sre-print' }, approvers: [{ kind: 'user', userId: 'U0SRE' }], ...overrides });
const combined = (chosen: ReturnType<typeof evaluation>, other: ReturnType<typeof evaluation>) => withStrictestLimits({ chosen, candidates: [chosen, other] });

describe('withStrictestLimits: each limit the strictest any rule the input may fall under sets', () => {
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

  it('bans self-approval when either rule does', () => {
    const anyone = { approvers: [{ kind: 'channel' as const }], allowSelfApproval: true };
    expect(combined(devLead(anyone), sre({ allowSelfApproval: false })).allowSelfApproval).toBe(false);
    expect(combined(devLead(anyone), sre({ allowSelfApproval: true })).allowSelfApproval).toBe(true);
  });

  it('keeps self-approval where the approvers name the requester, who would otherwise be nobody', () => {
    const requester = devLead({ approvers: [{ kind: 'requester' }], allowSelfApproval: true });
    expect(combined(requester, sre({ allowSelfApproval: false }))).toBe(requester);
  });

  it('takes the larger quorum, as far as the approvers it keeps can meet it', () => {
    const twoLeads = { approvers: [{ kind: 'user' as const, userId: 'U0DEVLEAD' }, { kind: 'user' as const, userId: 'U0QA' }] };
    expect(combined(devLead(twoLeads), sre({ required: 2 })).required).toBe(2);
    expect(combined(devLead({ approvers: [{ kind: 'group', groupId: 'S0DEV' }] }), sre({ required: 3 })).required).toBe(3);
    expect(combined(devLead({ approvers: [{ kind: 'channel' }] }), sre({ required: 2 })).required).toBe(2);
    // One named person can never give two approvals: the card would only wait to expire.
    expect(combined(devLead(), sre({ required: 2 })).required).toBe(1);
    expect(combined(devLead({ ...twoLeads, required: 2 }), sre()).required).toBe(2);
  });

  it('takes the shorter expiry, with a reminder that still comes before it', () => {
    const hour = 3_600_000;
    expect(combined(devLead({ expiryMs: 24 * hour }), sre({ expiryMs: 2 * hour })).expiryMs).toBe(2 * hour);
    expect(combined(devLead({ expiryMs: 2 * hour }), sre({ expiryMs: 24 * hour })).expiryMs).toBe(2 * hour);
    expect(combined(devLead({ expiryMs: 24 * hour, reminderMs: hour }), sre({ expiryMs: 2 * hour })).reminderMs).toBe(hour);
    expect(combined(devLead({ expiryMs: 24 * hour, reminderMs: 4 * hour }), sre({ expiryMs: 2 * hour, reminderMs: 30 * 60_000 })).reminderMs).toBe(30 * 60_000);
    expect(combined(devLead({ expiryMs: 24 * hour, reminderMs: 4 * hour }), sre({ expiryMs: 2 * hour }))).not.toHaveProperty('reminderMs');
  });

  it('keeps who approves, and all that holds nothing back, from the chosen rule', () => {
    const chosen = devLead({ onExpiry: 'continue', notify: { thread: true, channels: ['C0DEV'], dmApprovers: true }, escalation: [{ afterMs: 600_000, remind: true, addApprovers: [{ kind: 'user', userId: 'U0CTO' }] }] });
    const result = combined(chosen, sre({ autoApprove: 'forbidden', onExpiry: 'stop', notify: { thread: true, channels: ['C0SRE'], dmApprovers: false } }));
    const { autoApprove: _autoApprove, rule: _rule, ...rest } = result;
    const { autoApprove: _own, rule: _ownRule, ...chosenRest } = chosen;
    expect(rest).toEqual(chosenRest);
    expect(result.rule).toMatchObject({ index: 1, name: 'dev' });
  });

  it('is the chosen evaluation itself when nothing is stricter, and names the combination otherwise', () => {
    const chosen = devLead();
    expect(combined(chosen, sre())).toBe(chosen);
    const forbidding = combined(chosen, sre({ autoApprove: 'forbidden' }));
    expect(forbidding.rule?.fingerprint).not.toBe('dev-print');
    expect(combined(devLead(), sre({ autoApprove: 'forbidden' })).rule?.fingerprint).toBe(forbidding.rule?.fingerprint);
    expect(combined(devLead(), sre({ autoApprove: 'forbidden', grants: 'forbidden' })).rule?.fingerprint).not.toBe(forbidding.rule?.fingerprint);
  });

  it('takes nothing from a rule that lets the call through unasked, nor adds to one that does', () => {
    const chosen = devLead();
    expect(combined(chosen, sre({ needsApproval: false, expiryMs: 60_000 }))).toBe(chosen);
    const unasked = devLead({ needsApproval: false });
    expect(combined(unasked, sre({ autoApprove: 'forbidden' }))).toBe(unasked);
  });
});
