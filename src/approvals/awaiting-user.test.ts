import { describe, expect, it } from 'vitest';
import { callsAwaitingUser, groupsNamedBy } from './awaiting-user.js';
import { CHANNEL, CREATED_AT, evaluation, makeStep, REQUESTER } from './pending-step.test-support.js';

const member = new Set([CHANNEL]);
const judge = (steps: Parameters<typeof callsAwaitingUser>[0]['steps'], userId: string, extra: Partial<Parameters<typeof callsAwaitingUser>[0]> = {}) =>
  callsAwaitingUser({ steps, userId, memberOf: member, groupMembers: new Map(), now: CREATED_AT, ...extra }).map(({ call }) => call.approvalId);

describe('callsAwaitingUser', () => {
  it('lists undecided approval calls the person may approve, as a click would be judged', () => {
    const step = makeStep(['apv-1', { approvalId: 'ask-1', kind: 'question' }, { approvalId: 'bob-only', policy: evaluation({ approvers: [{ kind: 'user', userId: 'UBOB' }] }) }]);
    expect(judge([step], 'UCAROL')).toEqual(['apv-1']);
    expect(judge([step], 'UBOB')).toEqual(['apv-1', 'bob-only']);
    // Never the requester's own request unless the rule allows it.
    expect(judge([step], REQUESTER)).toEqual([]);
  });

  it('leaves out decided calls, closed or expired steps, channels the person is not in, and a quorum they already counted towards', () => {
    const decided = makeStep(['apv-1'], { decisions: { 'apv-1': { outcome: 'denied', userId: 'UBOB', at: 1 } } });
    const closed = makeStep(['apv-1'], { phase: 'superseded' });
    const expired = makeStep(['apv-1'], { expiresAt: CREATED_AT });
    const elsewhere = makeStep(['apv-1'], { channel: 'C0ELSEWHERE' });
    const quorum = makeStep([{ approvalId: 'two', policy: evaluation({ required: 2 }) }]);
    quorum.approvals = { two: [{ userId: 'UCAROL', at: 1, version: 0, inputHash: quorum.calls[0]!.versions![0]!.inputHash }] };
    expect(judge([decided, closed, expired, elsewhere, quorum], 'UCAROL')).toEqual([]);
    expect(judge([quorum], 'UBOB')).toEqual(['two']);
  });

  it('leaves out a step the approval hook is still deciding, until the mark\'s deadline', () => {
    const deciding = makeStep(['apv-1'], { hookDecidingUntil: CREATED_AT + 5_000 });
    expect(judge([deciding], 'UCAROL')).toEqual([]);
    // Left behind by a process that stopped mid-hook: ignored once the hook's time is up.
    expect(judge([deciding], 'UCAROL', { now: CREATED_AT + 5_000 })).toEqual(['apv-1']);
  });

  it('resolves user groups: a member may approve, anyone else may not, and an unresolved group lets nobody in', () => {
    const step = makeStep([{ approvalId: 'oncall', policy: evaluation({ approvers: [{ kind: 'group', groupId: 'S0ONCALL' }] }) }]);
    expect(groupsNamedBy([step])).toEqual(['S0ONCALL']);
    const groupMembers = new Map([['S0ONCALL', new Set(['UBOB'])]]);
    expect(judge([step], 'UBOB', { groupMembers })).toEqual(['oncall']);
    expect(judge([step], 'UCAROL', { groupMembers })).toEqual([]);
    expect(judge([step], 'UBOB')).toEqual([]);
  });
});
