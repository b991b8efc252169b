import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { governingPolicy } from './governing-policy.js';
import { quorumReachable } from './quorum-reachable.js';

/** The evaluation of a prod restart under a config whose only rule has these settings. */
function underRule(settings: string) {
  const { policy } = parseConfigFile(`policy:\n  rules:\n    - tools: [restart_service]\n${settings}`, 'countersign.yml');
  return evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C1', input: { namespace: 'prod' } });
}

const reachable = (card: string, inForce: string, groupMembers: Map<string, Set<string>> = new Map()) =>
  quorumReachable({ governing: governingPolicy({ step: { calls: [] }, stored: underRule(card), current: underRule(inForce) }), requesterId: 'UALICE', groupMembers });

describe('quorumReachable: can anyone still approve under both the card and the config in force?', () => {
  it('no, when the deploy replaced the approvers', () => {
    expect(reachable('      approvers: [UBOB]\n', '      approvers: [ULEAD]\n')).toBe(false);
  });

  it('no, when the raised quorum exceeds the people both name', () => {
    expect(reachable('      approvers: [UBOB, ULEAD]\n', '      approvers: [ULEAD, UCAROL]\n      required: 2\n')).toBe(false);
    expect(reachable('      approvers: [UBOB, ULEAD, UCAROL]\n', '      approvers: [ULEAD, UCAROL]\n      required: 2\n')).toBe(true);
  });

  it('counts the members of the groups read for the click, and nobody the self-approval ban leaves out', () => {
    const members = new Map([['S0LEADS', new Set(['ULEAD', 'UALICE'])]]);
    expect(reachable('      approvers: [ULEAD]\n', '      approvers: ["group:S0LEADS"]\n', members)).toBe(true);
    expect(reachable('      approvers: [UALICE, UBOB]\n      allowSelfApproval: true\n', '      approvers: ["group:S0LEADS"]\n', members)).toBe(false);
  });

  it('yes when it cannot tell: a group not read, or anyone in the channel under both', () => {
    expect(reachable('      approvers: [UBOB]\n', '      approvers: ["group:S0LEADS"]\n')).toBe(true);
    expect(reachable('      approvers: [channel]\n', '      approvers: [channel]\n      required: 2\n')).toBe(true);
    expect(reachable('      approvers: [channel]\n', '      approvers: [ULEAD]\n')).toBe(true);
  });
});
