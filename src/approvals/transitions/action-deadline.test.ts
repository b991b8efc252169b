import { describe, expect, expectTypeOf, it } from 'vitest';
import { inputHash } from '../input-version.js';
import type { PendingStep } from '../pending-step.js';
import { CHANNEL, CREATED_AT, evaluation, makeStep, REQUESTER, TEAM } from '../pending-step.test-support.js';
import type { PolicyEvaluation } from '../policy/evaluate-policy.js';
import { applyCallAction, type CallAction, type CallActionResult } from './call-action.js';
import { hookDecisionTransition } from './hook-decision.js';
import type { ActionTransition, StepTransition } from './step-transition.js';

/**
 * Every transition that records what a person or the approval hook did to a call carries the
 * deadline the store judges by Redis's clock (`StepTransition.deadline`): the earliest that applies.
 * Without it, only the clock of the process that computed the change judges the expiry, and a
 * replica whose clock runs behind records an approval after it. A new producer of such changes
 * belongs in this table; its return type must be `ActionTransition` (checked below by tsc).
 */
const MINUTE = 60_000;
const NOW = CREATED_AT + 2 * MINUTE;
const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const STAGING_DEADLINE = CREATED_AT + 60 * MINUTE;
const staging = evaluation({ expiryMs: 60 * MINUTE });
const prod = evaluation({ approvers: [{ kind: 'user', userId: CAROL }], expiryMs: 10 * MINUTE });
const stagingStep = (policy: PolicyEvaluation = staging) => makeStep([{ approvalId: 'a1', input: { namespace: 'staging' }, policy }], { expiresAt: STAGING_DEADLINE });
const toProd: CallAction = { kind: 'edit', fromVersion: 0, input: { namespace: 'prod' }, submittedInput: { namespace: 'prod' }, policy: prod };
const asked = { number: 0, inputHash: inputHash({ namespace: 'staging' }) };

function click(step: PendingStep, userId: string, action: CallAction, currentPolicy?: PolicyEvaluation): StepTransition {
  const result: CallActionResult = applyCallAction(
    step,
    { stepId: step.stepId, approvalId: 'a1', userId, origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action },
    { now: NOW, groupMembers: new Map(), newGrantId: () => 'grant1', ...(currentPolicy ? { currentPolicy } : {}) },
  );
  if (!result.ok) throw new Error(`refused: ${result.refusal.message}`);
  return result.transition;
}

const producers: Array<{ name: string; transition: () => StepTransition | undefined; deadline: number | undefined }> = [
  { name: 'a click that approves', transition: () => click(stagingStep(), BOB, { kind: 'approve', version: 0 }), deadline: STAGING_DEADLINE },
  { name: 'a click counted towards a quorum', transition: () => click(stagingStep(evaluation({ expiryMs: 60 * MINUTE, required: 2 })), BOB, { kind: 'approve', version: 0 }), deadline: STAGING_DEADLINE },
  {
    name: 'an approval that creates a grant',
    transition: () => click(stagingStep(), BOB, { kind: 'approve', version: 0, grant: { scope: 'thread', hours: 1, identicalArgumentsOnly: false } }),
    deadline: STAGING_DEADLINE,
  },
  { name: 'a denial', transition: () => click(stagingStep(), BOB, { kind: 'deny' }), deadline: STAGING_DEADLINE },
  {
    name: "an approval after a deploy shortened the rule's expiry",
    transition: () => click(stagingStep(), BOB, { kind: 'approve', version: 0 }, evaluation({ expiryMs: 30 * MINUTE })),
    deadline: CREATED_AT + 30 * MINUTE,
  },
  { name: 'an edit that counts as the approval, to a rule with a shorter expiry', transition: () => click(stagingStep(), CAROL, toProd), deadline: CREATED_AT + 10 * MINUTE },
  { name: "an edit to a rule with a shorter expiry whose editor is not that rule's approver", transition: () => click(stagingStep(), BOB, toProd), deadline: CREATED_AT + 10 * MINUTE },
  {
    name: 'an answer to a question',
    transition: () => click(makeStep([{ approvalId: 'a1', kind: 'question' }], { expiresAt: STAGING_DEADLINE }), REQUESTER, { kind: 'answer', answer: 'yes' }),
    deadline: STAGING_DEADLINE,
  },
  { name: 'an answer to a question that has no expiry', transition: () => click(makeStep([{ approvalId: 'a1', kind: 'question' }]), REQUESTER, { kind: 'answer', answer: 'yes' }), deadline: undefined },
  { name: "the approval hook's approval", transition: () => hookDecisionTransition(stagingStep(), { approvalId: 'a1', hookName: 'h', asked, verdict: { decision: 'approve' }, now: NOW }), deadline: STAGING_DEADLINE },
  {
    name: "the approval hook's denial",
    transition: () => hookDecisionTransition(stagingStep(), { approvalId: 'a1', hookName: 'h', asked, verdict: { decision: 'deny', reason: 'freeze' }, now: NOW }),
    deadline: STAGING_DEADLINE,
  },
  {
    name: "the approval hook's approval after a deploy shortened the rule's expiry",
    transition: () => hookDecisionTransition(stagingStep(), { approvalId: 'a1', hookName: 'h', asked, verdict: { decision: 'approve' }, now: NOW, currentPolicy: evaluation({ expiryMs: 30 * MINUTE }) }),
    deadline: CREATED_AT + 30 * MINUTE,
  },
  {
    name: "the approval hook's denial after a deploy shortened the rule's expiry",
    transition: () =>
      hookDecisionTransition(stagingStep(), { approvalId: 'a1', hookName: 'h', asked, verdict: { decision: 'deny', reason: 'freeze' }, now: NOW, currentPolicy: evaluation({ expiryMs: 30 * MINUTE }) }),
    deadline: CREATED_AT + 30 * MINUTE,
  },
];

describe('every change that records an action on a call carries its deadline for the store', () => {
  it.each(producers)('$name', ({ transition, deadline }) => {
    const made = transition();
    expect(made).toBeDefined();
    expect(made).toHaveProperty('deadline', deadline);
  });

  it('is required by their types', () => {
    expectTypeOf<Extract<CallActionResult, { ok: true }>['transition']>().toEqualTypeOf<ActionTransition>();
    expectTypeOf(hookDecisionTransition).returns.toEqualTypeOf<ActionTransition | undefined>();
  });
});
