import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../config/config-file.js';
import { callsAwaitingUser } from './awaiting-user.js';
import { CHANNEL, CREATED_AT, makeStep, TEAM } from './pending-step.test-support.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';
import { applyCallAction } from './transitions/call-action.js';

/**
 * Review: App Home lists by the governing policy (afec18c), and a deploy that shortens a rule's
 * expiry reaches waiting cards (2c0a359). Home should not offer Bob "Approve" on a request that a
 * click already refuses as expired (and closes), but it compares only the card's stored deadline.
 */
const rule = (expiry: string) =>
  parseConfigFile(`policy:\n  rules:\n    - name: prod restarts\n      tools: [restart_service]\n      approvers: [UBOB]\n      expiry: ${expiry}\n`, 'c.yml').policy;
const input = { service: 'worker', namespace: 'prod' };
const card = evaluatePolicy({ policy: rule('24h'), toolName: 'restart_service', channel: CHANNEL, input });
const inForce = evaluatePolicy({ policy: rule('15m'), toolName: 'restart_service', channel: CHANNEL, input });
const TWO_HOURS_LATER = CREATED_AT + 2 * 60 * 60_000;

describe('App Home after a deploy that shortened the expiry of the rule a card waits under', () => {
  it('does not list a call whose click is refused as expired', () => {
    const step = makeStep([{ approvalId: 'a1', input, policy: card }], { expiresAt: CREATED_AT + card.expiryMs });
    // What Bob's click gets two hours in (the decider): refused as expired.
    const click = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'UBOB', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0 } },
      { now: TWO_HOURS_LATER, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce },
    );
    expect(click.ok ? 'recorded' : click.refusal.code).toBe('expired');
    // What Home lists for Bob at the same moment.
    const listed = callsAwaitingUser({ steps: [step], userId: 'UBOB', memberOf: new Set([CHANNEL]), groupMembers: new Map(), now: TWO_HOURS_LATER, currentPolicyOf: () => inForce }).map(({ call }) => call.approvalId);
    expect(listed, 'Home offers Bob Approve on a request the click refuses as expired (and closes)').toEqual([]);
  });
});
