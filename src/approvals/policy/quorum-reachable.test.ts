import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { ladderRuleOf } from './escalation-scope.js';
import { withAddedApprovers } from './escalated-approvers.js';
import { quorumReachable } from './quorum-reachable.js';

/** The evaluation of a prod restart under a config whose only rule has these settings. */
function underRule(settings: string) {
  const { policy } = parseConfigFile(`policy:\n  rules:\n    - tools: [restart_service]\n${settings}`, 'countersign.yml');
  return evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C1', input: { namespace: 'prod' } });
}

const reachable = (card: string, inForce: string, groupMembers: Map<string, Set<string>> = new Map()) =>
  quorumReachable({ step: { calls: [], createdAt: 0 }, stored: underRule(card), current: underRule(inForce), requesterId: 'UALICE', groupMembers });

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

describe('quorumReachable: counting the hops of the ladder still to come', () => {
  const HOP_MS = 30 * 60_000;
  const EXPIRY_MS = 60 * 60_000;
  // Posted when Bob was on call, with the lead as the fallback after 30 minutes.
  const card = underRule('      approvers: [UBOB]\n      escalation: [{ after: 30m, addApprovers: [ULEAD] }]\n      expiry: 1h\n');
  const ladder = card.escalation ?? [];
  /** The card's step, `done` hops made; `nextAt` absent when the next hop will not come (an edit brought the expiry before it). */
  const stepOf = ({ done = 0, nextAt = HOP_MS as number | null, expiresAt = EXPIRY_MS } = {}) => ({
    calls: [],
    createdAt: 0,
    expiresAt,
    escalation: { ladder, rule: ladderRuleOf(card), done, ...(nextAt === null ? {} : { nextAt }) },
  });
  const reachable = ({ inForce, step = stepOf(), stored = card, groupMembers = new Map<string, Set<string>>() }: { inForce: string; step?: ReturnType<typeof stepOf>; stored?: typeof card; groupMembers?: Map<string, Set<string>> }) =>
    quorumReachable({ step, stored, current: underRule(inForce), requesterId: 'UALICE', groupMembers });

  it('yes, when a hop still to come adds someone the config in force names (a deploy that promoted the fallback)', () => {
    expect(reachable({ inForce: '      approvers: [ULEAD]\n' })).toBe(true);
  });

  it('yes, once that hop is made, as before', () => {
    const escalated = withAddedApprovers(card, ladder[0]?.addApprovers ?? []);
    expect(reachable({ inForce: '      approvers: [ULEAD]\n', step: stepOf({ done: 1, nextAt: null }), stored: escalated })).toBe(true);
  });

  it('no, when the hop will not come before the step expires', () => {
    expect(reachable({ inForce: '      approvers: [ULEAD]\n', step: stepOf({ nextAt: null }) })).toBe(false);
    expect(reachable({ inForce: '      approvers: [ULEAD]\n', step: stepOf({ expiresAt: HOP_MS }) })).toBe(false);
  });

  it('no, when the hop adds nobody the config in force names', () => {
    expect(reachable({ inForce: '      approvers: [UCAROL]\n' })).toBe(false);
  });

  it("no, when the version is under another rule than the ladder's: the hop adds nobody to it", () => {
    const otherRule = underRule('      approvers: [UBOB]\n      expiry: 1h\n');
    expect(reachable({ inForce: '      approvers: [ULEAD]\n', stored: otherRule })).toBe(false);
  });

  it("yes when it cannot tell: the hop's group was not read for the click", () => {
    const toGroup = underRule('      approvers: [UBOB]\n      escalation: [{ after: 30m, addApprovers: ["group:S0LEADS"] }]\n      expiry: 1h\n');
    const step = { ...stepOf(), escalation: { ladder: toGroup.escalation ?? [], rule: ladderRuleOf(toGroup), done: 0, nextAt: HOP_MS } };
    expect(reachable({ inForce: '      approvers: [ULEAD]\n', step, stored: toGroup })).toBe(true);
  });

  it('counts the hop under the config in force only where that keeps the ladder', () => {
    const ops = '      approvers: [UBOB, "group:S0OPS"]\n';
    const hop = (who: string) => `      escalation: [{ after: 30m, addApprovers: [${who}] }]\n      expiry: 1h\n`;
    const withOps = underRule(`${ops}${hop('ULEAD')}`);
    const step = { ...stepOf(), escalation: { ladder: withOps.escalation ?? [], rule: ladderRuleOf(withOps), done: 0, nextAt: HOP_MS } };
    const groupMembers = new Map([['S0OPS', new Set(['UBOB', 'UDAVE'])]]);
    // The deploy raised the quorum to 3 and kept the ladder: Bob, Dave and, after the hop, the lead.
    expect(reachable({ inForce: `${ops}      required: 3\n${hop('ULEAD')}`, step, stored: withOps, groupMembers })).toBe(true);
    // Under another ladder the card's hop adds nobody there: only Bob and Dave are let approve by both.
    expect(reachable({ inForce: `${ops}      required: 3\n${hop('UCAROL')}`, step, stored: withOps, groupMembers })).toBe(false);
  });
});
