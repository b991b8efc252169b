import { describe, expect, it } from 'vitest';
import { callsAwaitingUser, groupsNamedBy, openCallsIn, type CurrentPolicyOf } from './awaiting-user.js';
import { currentVersion } from './input-version.js';
import { CHANNEL, CREATED_AT, evaluation, makeStep, REQUESTER } from './pending-step.test-support.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

const member = new Set([CHANNEL]);
/** The config in force says of every call what its card says: no deploy since. */
const unchanged: CurrentPolicyOf = (call) => currentVersion(call)?.policy;
const judge = (steps: Parameters<typeof callsAwaitingUser>[0]['steps'], userId: string, extra: Partial<Parameters<typeof callsAwaitingUser>[0]> = {}) =>
  callsAwaitingUser({ steps, userId, memberOf: member, groupMembers: new Map(), now: CREATED_AT, currentPolicyOf: unchanged, ...extra }).map(({ call }) => call.approvalId);
/** A deploy since: the config in force says `current` of every call. */
const deployed = (current: PolicyEvaluation): CurrentPolicyOf => () => current;
const users = (...userIds: string[]) => userIds.map((userId) => ({ kind: 'user' as const, userId }));

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
    expect(groupsNamedBy(openCallsIn({ steps: [step], memberOf: member, now: CREATED_AT }), unchanged)).toEqual(['S0ONCALL']);
    const groupMembers = new Map([['S0ONCALL', new Set(['UBOB'])]]);
    expect(judge([step], 'UBOB', { groupMembers })).toEqual(['oncall']);
    expect(judge([step], 'UCAROL', { groupMembers })).toEqual([]);
    expect(judge([step], 'UBOB')).toEqual([]);
  });

  describe('after a deploy changed the rule: judged as a click is, by the card\'s policy and the config in force together', () => {
    const bobOnly = () => makeStep([{ approvalId: 'restart', policy: evaluation({ approvers: users('UBOB') }) }]);

    it('lists a call to nobody once the config in force replaced its approvers: each is refused by one of the two', () => {
      const replaced = deployed(evaluation({ approvers: users('U0LEAD') }));
      expect(judge([bobOnly()], 'UBOB')).toEqual(['restart']);
      expect(judge([bobOnly()], 'UBOB', { currentPolicyOf: replaced })).toEqual([]);
      expect(judge([bobOnly()], 'U0LEAD', { currentPolicyOf: replaced })).toEqual([]);
    });

    it('lists a call only to the approvers both name when the config in force narrowed them, and never loosens the card', () => {
      const step = makeStep([{ approvalId: 'restart', policy: evaluation({ approvers: users('UBOB', 'U0LEAD') }) }]);
      const narrowed = deployed(evaluation({ approvers: users('U0LEAD') }));
      expect(judge([step], 'U0LEAD', { currentPolicyOf: narrowed })).toEqual(['restart']);
      expect(judge([step], 'UBOB', { currentPolicyOf: narrowed })).toEqual([]);
      // Anyone in the channel under the config in force: the card still names Bob alone.
      const loosened = deployed(evaluation());
      expect(judge([bobOnly()], 'UBOB', { currentPolicyOf: loosened })).toEqual(['restart']);
      expect(judge([bobOnly()], 'UCAROL', { currentPolicyOf: loosened })).toEqual([]);
      // A config that no longer asks for approval does not govern a waiting card.
      expect(judge([bobOnly()], 'UBOB', { currentPolicyOf: deployed(evaluation({ needsApproval: false, approvers: users('U0LEAD') })) })).toEqual(['restart']);
    });

    it('resolves the groups the config in force names too, and lists nothing whose config in force could not be read', () => {
      const oncall = deployed(evaluation({ approvers: [{ kind: 'group', groupId: 'S0ONCALL' }] }));
      const open = openCallsIn({ steps: [bobOnly()], memberOf: member, now: CREATED_AT });
      expect(groupsNamedBy(open, oncall)).toEqual(['S0ONCALL']);
      expect(judge([bobOnly()], 'UBOB', { currentPolicyOf: oncall, groupMembers: new Map([['S0ONCALL', new Set(['UBOB'])]]) })).toEqual(['restart']);
      expect(judge([bobOnly()], 'UBOB', { currentPolicyOf: oncall, groupMembers: new Map([['S0ONCALL', new Set(['U0LEAD'])]]) })).toEqual([]);
      expect(judge([bobOnly()], 'UBOB', { currentPolicyOf: oncall })).toEqual([]);
      // The evaluation failed: a click could not be judged either.
      expect(judge([bobOnly()], 'UBOB', { currentPolicyOf: () => undefined })).toEqual([]);
      expect(groupsNamedBy(open, () => undefined)).toEqual([]);
    });
  });
});
