import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { authorizeGoverned, governingPolicy } from './governing-policy.js';

/** The evaluation of a prod restart under a config whose only rule has these settings. */
function underRule(settings: string) {
  const { policy } = parseConfigFile(`policy:\n  rules:\n    - tools: [restart_service]\n${settings}`, 'countersign.yml');
  return evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C1', input: { namespace: 'prod' } });
}

const noLadder = { calls: [] };
const authorize = (governing: ReturnType<typeof governingPolicy>, userId: string) =>
  authorizeGoverned({ governing, userId, requesterId: 'UALICE', groupMembers: new Map(), approvedBy: [] });

describe('governingPolicy: the card stored one policy, the config in force may say another', () => {
  const card = underRule('      approvers: [UBOB, ULEAD]\n');

  it('is the stored policy alone when the config in force has the same rule', () => {
    expect(governingPolicy({ step: noLadder, stored: card, current: underRule('      approvers: [ULEAD, UBOB]\n') })).toEqual({ stored: card, required: 1 });
  });

  it('holds a person to both: someone the new rule leaves out is refused, and told the policy changed', () => {
    const governing = governingPolicy({ step: noLadder, stored: card, current: underRule('      approvers: [ULEAD]\n') });
    expect(authorize(governing, 'ULEAD')).toEqual({ allowed: true });
    expect(authorize(governing, 'UBOB')).toMatchObject({ allowed: false, code: 'not-eligible', reason: 'Only <@ULEAD> can approve this under the approval policy now in force, which changed since the card was posted' });
  });

  it('does not widen the card: someone only the new rule names is refused as the card says, and told the card still applies', () => {
    const governing = governingPolicy({ step: noLadder, stored: card, current: underRule('      approvers: [UBOB, ULEAD, UCAROL]\n') });
    expect(authorize(governing, 'UCAROL')).toMatchObject({
      allowed: false,
      reason: 'Only <@UBOB> or <@ULEAD> can approve this under the policy this card was posted with, which still applies together with the one now in force',
    });
  });

  it('takes the larger quorum and either self-approval ban', () => {
    const lenient = underRule('      approvers: [UALICE, UBOB]\n      allowSelfApproval: true\n');
    const governing = governingPolicy({ step: noLadder, stored: lenient, current: underRule('      approvers: [UALICE, UBOB]\n      required: 2\n') });
    expect(governing.required).toBe(2);
    expect(authorize(governing, 'UALICE')).toMatchObject({ allowed: false, code: 'self-approval' });
  });

  it('ignores a config that no longer asks for approval: the card still waits for its approvers', () => {
    expect(governingPolicy({ step: noLadder, stored: card, current: underRule('      approval: never\n') })).toEqual({ stored: card, required: 1 });
  });
});

describe('authorizeGoverned after a deploy that replaced the approvers', () => {
  const governing = governingPolicy({ step: noLadder, stored: underRule('      approvers: [UBOB]\n'), current: underRule('      approvers: [ULEAD]\n') });
  const deny = (userId: string) => authorizeGoverned({ governing, userId, requesterId: 'UALICE', groupMembers: new Map(), approvedBy: [], action: 'deny' });

  it("lets anyone either policy names deny (a veto only stops a call), and nobody else", () => {
    expect(deny('UBOB')).toEqual({ allowed: true });
    expect(deny('ULEAD')).toEqual({ allowed: true });
    expect(deny('UCAROL')).toMatchObject({ allowed: false, code: 'not-eligible' });
  });

  it("tells the new approver that the card's policy still applies", () => {
    expect(authorize(governing, 'ULEAD')).toMatchObject({
      allowed: false,
      reason: 'Only <@UBOB> can approve this under the policy this card was posted with, which still applies together with the one now in force',
    });
  });
});

describe('governingPolicy keeps the fallback approvers of a hop while the ladder is the same', () => {
  const ladder = '      escalation: [{ after: 30m, addApprovers: [ULEAD] }]\n';
  // The card's version after one hop, as `escalateTransition` leaves it.
  const hopped = { ...underRule(`      approvers: [UBOB]\n${ladder}`), approvers: [{ kind: 'user' as const, userId: 'UBOB' }, { kind: 'user' as const, userId: 'ULEAD' }], escalatedApprovers: ['ULEAD'] };

  it('after a deploy that only added a reminder to the rule', () => {
    const governing = governingPolicy({ step: noLadder, stored: hopped, current: underRule(`      approvers: [UBOB]\n      reminder: 10m\n${ladder}`) });
    expect(governing.current?.approvers).toEqual([{ kind: 'user', userId: 'UBOB' }, { kind: 'user', userId: 'ULEAD' }]);
    expect(authorize(governing, 'ULEAD')).toEqual({ allowed: true });
  });

  it('not after a deploy that changed the ladder or the approvers it answers for', () => {
    const otherLadder = governingPolicy({ step: noLadder, stored: hopped, current: underRule('      approvers: [UBOB]\n      escalation: [{ after: 30m, addApprovers: [UCAROL] }]\n') });
    expect(authorize(otherLadder, 'ULEAD')).toMatchObject({ allowed: false, code: 'not-eligible' });
    const otherApprovers = governingPolicy({ step: noLadder, stored: hopped, current: underRule(`      approvers: [UBOB, UDAN]\n${ladder}`) });
    expect(authorize(otherApprovers, 'ULEAD')).toMatchObject({ allowed: false, code: 'not-eligible' });
  });
});
