import { describe, expect, it } from 'vitest';
import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import { parseConfigFile } from '../config/config-file.js';
import { callsAwaitingUser } from './awaiting-user.js';
import { stepRouting } from './card-routing.js';
import { grantCovers, type Grant } from './grant.js';
import { currentVersion, inputHash } from './input-version.js';
import { CHANNEL, CREATED_AT, makeStep, TEAM } from './pending-step.test-support.js';
import type { PendingStep } from './pending-step.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';
import { governedReminderMentions } from './policy/governed-reminder-mentions.js';
import { governingPolicy } from './policy/governing-policy.js';
import { quorumReachable } from './policy/quorum-reachable.js';
import { UNAPPROVABLE_INPUT_TEXT } from './policy/unapprovable-input.js';
import { recheckApprovals } from './recheck-approvals.js';
import { applyCallAction, EDIT_UNAPPROVABLE_TEXT, type CallActionRequest } from './transitions/call-action.js';

/**
 * Deleting pods is SRE's (a group); dev-only deletes are the dev leads'. A list with dev and prod may
 * fall under either rule, so only someone in both groups may approve it: wherever eligibility is
 * judged, not only at the click.
 */
const policyWith = (devLeads: string) =>
  parseConfigFile(
    `
policy:
  rules:
    - name: deleting pods is SRE's
      tools: [delete_pods]
      approvers: ["group:S0SRE"]
    - name: dev-only deletes go to the dev leads
      tools: [delete_pods]
      input: [{ field: namespaces, oneOf: [dev] }]
      approvers: [${devLeads}]
      notify: { dmApprovers: true }
`,
    'countersign.yml',
  ).policy;
const policy = policyWith('"group:S0DEVLEADS", U0DEVLEAD');
const evaluate = (namespaces: string[], config = policy) => evaluatePolicy({ policy: config, toolName: 'delete_pods', channel: CHANNEL, input: { namespaces, selector: 'app=api' } });
const groupMembers = new Map([
  ['S0SRE', new Set(['U0SRE', 'U0BOTH'])],
  ['S0DEVLEADS', new Set(['U0LEAD2', 'U0BOTH'])],
]);
const devAndProd = { namespaces: ['dev', 'prod'], selector: 'app=api' };
const waiting = (namespaces = ['dev', 'prod'], config = policy) => makeStep([{ approvalId: 'a1', input: { namespaces, selector: 'app=api' }, policy: evaluate(namespaces, config) }]);
const click = (step: PendingStep, userId: string, action: CallActionRequest['action']): CallActionRequest => ({
  stepId: step.stepId,
  approvalId: 'a1',
  userId,
  origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' },
  action,
});
const NOW = CREATED_AT + 60_000;

describe('an input that may fall under several rules, wherever who may approve it is judged', () => {
  it('App Home lists it only for someone both rules let approve', () => {
    const step = waiting();
    const listed = (userId: string) =>
      callsAwaitingUser({ steps: [step], userId, memberOf: new Set([CHANNEL]), groupMembers, now: NOW, currentPolicyOf: (call) => currentVersion(call)?.policy }).length > 0;
    expect(['U0DEVLEAD', 'U0LEAD2', 'U0SRE', 'U0BOTH'].filter(listed)).toEqual(['U0BOTH']);
  });

  it('a reminder mentions only those both rules let approve', () => {
    const step = waiting();
    const governing = governingPolicy({ step, stored: currentVersion(step.calls[0]!)!.policy, current: undefined });
    expect(governedReminderMentions({ governing, requesterId: 'U0ALICE', approvedBy: [], groupMembers })).toEqual(['<@U0BOTH>']);
  });

  it('no DM copy goes to a named approver the other rule does not let approve', () => {
    const named = policyWith('U0DEVLEAD, U0BOTH');
    const both = parseConfigFile(
      `policy:\n  rules:\n    - { tools: [delete_pods], approvers: [U0SRE, U0BOTH] }\n    - { tools: [delete_pods], input: [{ field: namespaces, oneOf: [dev] }], approvers: [U0DEVLEAD, U0BOTH], notify: { dmApprovers: true } }\n`,
      'countersign.yml',
    ).policy;
    expect(stepRouting(waiting(['dev'], both)).dmUserIds).toEqual(['U0DEVLEAD', 'U0BOTH']);
    expect(stepRouting(waiting(['dev', 'prod'], both)).dmUserIds).toEqual(['U0BOTH']);
    // A group in the other rule may hold the dev lead: the copy goes, and the click decides.
    expect(stepRouting(waiting(['dev', 'prod'], named)).dmUserIds).toEqual(['U0DEVLEAD', 'U0BOTH']);
  });

  it('a grant the dev lead gave for dev deletes does not cover it', () => {
    const grant: Grant = {
      grantId: 'g1',
      teamId: TEAM,
      channel: CHANNEL,
      scope: 'channel',
      toolName: 'delete_pods',
      identicalArgumentsOnly: false,
      input: { namespaces: ['dev'], selector: 'app=api' },
      evaluation: evaluate(['dev']),
      grantedBy: 'U0DEVLEAD',
      createdAt: CREATED_AT,
      expiresAt: NOW + 3_600_000,
    };
    const candidate = (namespaces: string[]) => ({
      toolName: 'delete_pods',
      channel: CHANNEL,
      threadTs: '1',
      input: { namespaces, selector: 'app=api' },
      evaluation: evaluate(namespaces),
      requesterId: 'U0ALICE',
      groupMembers,
      inChannel: () => true,
      now: NOW,
    });
    expect(grantCovers(grant, candidate(['dev']))).toBe(true);
    expect(grantCovers(grant, candidate(['dev', 'prod']))).toBe(false);
    // Nor does one given on such a card by someone both rules let approve, for a dev-only delete.
    expect(grantCovers({ ...grant, evaluation: evaluate(['dev', 'prod']), grantedBy: 'U0BOTH' }, candidate(['dev']))).toBe(false);
  });

  it('the resume revokes an approval the dev lead gave on a card posted before every rule counted', async () => {
    const before = evaluate(['dev']);
    const step = makeStep([{ approvalId: 'a1', input: devAndProd, policy: before }], { phase: 'resumed' });
    step.decisions = { a1: { outcome: 'approved', userId: 'U0DEVLEAD', at: NOW, version: 0, inputHash: inputHash(devAndProd), approvedBy: ['U0DEVLEAD'] } };
    const result = await recheckApprovals({ step, resolveGroups: async () => groupMembers, currentEvaluation: async () => evaluate(['dev', 'prod']), now: NOW + 1 });
    expect(result.revoked).toEqual([expect.objectContaining({ userId: 'U0DEVLEAD' })]);
    expect(result.step.decisions.a1).toMatchObject({ outcome: 'denied', userId: COUNTERSIGN_ACTOR });
  });

  it('a click finds nobody in both groups: closed with the reason, not left waiting', () => {
    const step = waiting();
    const apart = new Map([
      ['S0SRE', new Set(['U0SRE'])],
      ['S0DEVLEADS', new Set(['U0LEAD2'])],
    ]);
    expect(quorumReachable({ step, stored: currentVersion(step.calls[0]!)!.policy, current: undefined, requesterId: 'U0ALICE', groupMembers: apart })).toBe(false);
    const result = applyCallAction(step, click(step, 'U0DEVLEAD', { kind: 'approve', version: 0 }), { now: NOW, groupMembers: apart, newGrantId: () => 'g1' });
    expect(result.ok && result.effect).toEqual({ kind: 'decided', decision: { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: NOW, reason: UNAPPROVABLE_INPUT_TEXT } });
    // With someone in both, the dev lead is refused and the card waits for them.
    const refused = applyCallAction(step, click(step, 'U0DEVLEAD', { kind: 'approve', version: 0 }), { now: NOW, groupMembers, newGrantId: () => 'g1' });
    expect(refused.ok || refused.refusal.code).toBe('not-eligible');
    const approved = applyCallAction(step, click(step, 'U0BOTH', { kind: 'approve', version: 0 }), { now: NOW, groupMembers, newGrantId: () => 'g1' });
    expect(approved.ok && approved.effect).toMatchObject({ kind: 'decided', decision: { outcome: 'approved', userId: 'U0BOTH' } });
  });

  it('an edit to an input nobody could approve is refused, and changes nothing', () => {
    const named = policyWith('U0DEVLEAD');
    const both = { namespaces: ['dev', 'prod'], selector: 'app=api' };
    const step = waiting(['dev'], named);
    const result = applyCallAction(step, click(step, 'U0DEVLEAD', { kind: 'edit', fromVersion: 0, input: both, submittedInput: both, policy: evaluate(['dev', 'prod'], named) }), {
      now: NOW,
      groupMembers: new Map([['S0SRE', new Set(['U0SRE'])]]),
      newGrantId: () => 'g1',
    });
    expect(result.ok || result.refusal).toEqual({ code: 'edit-unapprovable', message: EDIT_UNAPPROVABLE_TEXT });
  });
});
