import { describe, expect, it } from 'vitest';
import { evaluation, makeStep } from '../pending-step.test-support.js';
import { escalateTransition } from './escalate.js';

const leads = { kind: 'group' as const, groupId: 'S0LEADS' };
const ladder = [
  { afterMs: 100, remind: true, addApprovers: [] },
  { afterMs: 200, remind: false, addApprovers: [leads] },
];

const underLadderRule = () => evaluation({ escalation: ladder });

function ladderStep(overrides: { done?: number } = {}) {
  const step = makeStep([{ approvalId: 'a', policy: underLadderRule() }, { approvalId: 'q', kind: 'question' }, { approvalId: 'decided', policy: underLadderRule() }], {});
  const done = overrides.done ?? 0;
  step.escalation = { ladder, rule: { index: 0 }, done, nextAt: step.createdAt + ladder[done]!.afterMs };
  step.expiresAt = step.createdAt + 1_000;
  step.decisions.decided = { outcome: 'approved', userId: 'UBOB', at: step.createdAt };
  return step;
}

describe('escalate transition', () => {
  it('waits for the hop, makes it, and moves the ladder on', () => {
    const step = ladderStep();
    expect(escalateTransition(step, { now: step.createdAt + 99 })).toBeUndefined();
    const result = escalateTransition(step, { now: step.createdAt + 100 })!;
    expect(result.stage).toBe(ladder[0]);
    expect(result.transition.step.escalation).toEqual({ ladder, rule: { index: 0 }, done: 1, nextAt: step.createdAt + 200 });
    expect(result.transition.audit.map((event) => event.type === 'escalated' && [event.approvalId, event.hop, event.reminded])).toEqual([['a', 1, true]]);
  });

  it('adds the fallback approvers to the calls still waiting only, and ends the ladder after its last hop', () => {
    const step = ladderStep({ done: 1 });
    const next = escalateTransition(step, { now: step.createdAt + 200 })!.transition.step;
    expect(next.escalation?.nextAt).toBeUndefined();
    expect(next.calls[0]?.versions?.at(-1)?.policy.approvers).toEqual([...evaluation().approvers, leads]);
    expect(next.calls[2]?.versions?.at(-1)?.policy.approvers).toEqual(evaluation().approvers);
    expect(escalateTransition(next, { now: step.createdAt + 900 })).toBeUndefined();
    expect(step.calls[0]?.versions?.at(-1)?.policy.approvers).toEqual(evaluation().approvers);
  });

  it('stops the ladder once no call under its rule waits: no hop, no next one, nothing to announce', () => {
    const step = ladderStep();
    step.decisions.a = { outcome: 'approved', userId: 'UBOB', at: step.createdAt + 50 };
    const result = escalateTransition(step, { now: step.createdAt + 100 })!;
    expect(result.stage).toBeUndefined();
    expect(result.transition.step.escalation).toEqual({ ladder, rule: { index: 0 }, done: 0 });
    expect(result.transition.audit).toEqual([]);
    expect(escalateTransition(result.transition.step, { now: step.createdAt + 900 })).toBeUndefined();
  });

  it('leaves expiry the last step and does nothing to a closed step', () => {
    const step = ladderStep();
    expect(escalateTransition(step, { now: step.createdAt + 1_000 })).toBeUndefined();
    expect(escalateTransition({ ...step, phase: 'superseded' }, { now: step.createdAt + 150 })).toBeUndefined();
  });
});
