import { describe, expect, it } from 'vitest';
import { evaluation, makeStep } from '../pending-step.test-support.js';
import { withAddedApprovers, withEscalationSoFar, withoutEscalation } from './escalated-approvers.js';

const stg = { kind: 'user' as const, userId: 'U0STG' };
const lead = { kind: 'user' as const, userId: 'U0LEAD' };
const leads = { kind: 'group' as const, groupId: 'S0LEADS' };

describe("the rule's own approvers of an escalated call", () => {
  it('are the approvers without those the hops added', () => {
    const own = evaluation({ approvers: [stg] });
    const escalated = withAddedApprovers(withAddedApprovers(own, [lead]), [leads]);
    expect(escalated.approvers).toEqual([stg, lead, leads]);
    expect(withoutEscalation(escalated)).toEqual(own);
  });

  it('keep an approver of the rule that the ladder names too', () => {
    const own = evaluation({ approvers: [stg, lead] });
    const escalated = withAddedApprovers(own, [lead, leads]);
    expect(withoutEscalation(escalated).approvers).toEqual([stg, lead]);
  });

  it('are the policy itself when no hop added anyone', () => {
    const own = evaluation({ approvers: [stg] });
    expect(withoutEscalation(own)).toBe(own);
  });

  it("are the rule's own for an edit made after hops too", () => {
    const ladder = [{ afterMs: 100, remind: false, addApprovers: [lead] }];
    const own = evaluation({ approvers: [stg], escalation: ladder });
    const step = makeStep([{ approvalId: 'a', policy: own }]);
    step.escalation = { ladder, rule: { index: 0 }, done: 1 };
    const edited = withEscalationSoFar({ evaluation: own, step });
    expect(edited.approvers).toEqual([stg, lead]);
    expect(withoutEscalation(edited)).toEqual(own);
  });
});
