import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { grantCovers } from '../grant.js';
import { CHANNEL, makeStep, REQUESTER, TEAM } from '../pending-step.test-support.js';
import { evaluatePolicy } from '../policy/evaluate-policy.js';
import { applyCallAction } from './call-action.js';

const config = (extra: string) =>
  parseConfigFile(`policy:\n  rules:\n    - name: staging restarts\n      tools: [restart_service]\n      approvers: [UBOB]\n${extra}`, 'countersign.yml').policy;
const input = { service: 'api', namespace: 'staging' };

describe('Approve & allow on a card posted before a deploy', () => {
  it('the grant the click confirms covers the next identical call under the config in force', () => {
    const before = evaluatePolicy({ policy: config(''), toolName: 'restart_service', channel: CHANNEL, input });
    // The deploy tightens the rule a little (a reminder; it could be a shorter expiry): approvers, quorum and grants unchanged.
    const now = evaluatePolicy({ policy: config('      reminder: 10m\n'), toolName: 'restart_service', channel: CHANNEL, input });
    const step = makeStep([{ approvalId: 'a1', input, policy: before }]);
    const result = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'UBOB', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 4, identicalArgumentsOnly: false } } },
      { now: step.createdAt + 1000, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: now },
    );
    if (!result.ok) throw new Error(result.refusal.message);
    const grant = result.transition.grant!;
    // Confirmed, audited as grant-created and listed for 4 hours...
    expect(grant).toBeDefined();
    // ...but judged against the later call (evaluated by the config in force) it covers nothing.
    const covers = grantCovers(grant, { toolName: 'restart_service', channel: CHANNEL, threadTs: step.threadTs, input, evaluation: now, requesterId: REQUESTER, groupMembers: new Map(), inChannel: () => true, now: step.createdAt + 2000 });
    expect(covers).toBe(true);
  });

  it("refuses a grant, saying so, to a grantor the rule now in force does not name (a hop's fallback approver)", () => {
    const ladder = '      escalation: [{ after: 30m, addApprovers: [U0LEAD] }]\n';
    const card = evaluatePolicy({ policy: config(ladder), toolName: 'restart_service', channel: CHANNEL, input });
    // The card's version after the hop, as `escalateTransition` leaves it.
    const hopped = { ...card, approvers: [...card.approvers, { kind: 'user' as const, userId: 'U0LEAD' }], escalatedApprovers: ['U0LEAD'] };
    const now = evaluatePolicy({ policy: config(`      reminder: 10m\n${ladder}`), toolName: 'restart_service', channel: CHANNEL, input });
    const step = makeStep([{ approvalId: 'a1', input, policy: hopped }]);
    const result = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'U0LEAD', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 4, identicalArgumentsOnly: false } } },
      { now: step.createdAt + 1000, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: now },
    );
    expect(result.ok ? 'granted' : result.refusal).toEqual({ code: 'grant-not-allowed', message: expect.stringContaining('the rule now in force does not let you approve these calls yourself') });
  });
});
