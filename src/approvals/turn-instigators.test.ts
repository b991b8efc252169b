import { describe, expect, it } from 'vitest';
import type { Decision, PendingCall, PendingStep } from './pending-step.js';
import { turnInstigators } from './turn-instigators.js';

const question = (approvalId: string): PendingCall => ({ kind: 'question', approvalId, toolCallId: `call_${approvalId}`, toolName: 'ask_user', description: '', input: { question: 'What now?' } });
const approval = (approvalId: string): PendingCall => ({ kind: 'approval', approvalId, toolCallId: `call_${approvalId}`, toolName: 'restart_service', description: '', input: {} });

function stepWith(requesterId: string, decisions: Record<string, Omit<Decision, 'at'>>): PendingStep {
  return {
    schemaVersion: 2,
    stepId: 's1',
    threadKey: 'T:C:1',
    teamId: 'T',
    channel: 'C',
    threadTs: '1',
    requesterId,
    createdAt: 1,
    calls: [question('q1'), question('q2'), approval('a1'), approval('a2')],
    decisions: Object.fromEntries(Object.entries(decisions).map(([approvalId, decision]) => [approvalId, { ...decision, at: 2 }])),
    phase: 'complete',
    revision: 1,
  };
}

describe('turnInstigators', () => {
  it("names whoever answered a scheduled turn's question, once", () => {
    const step = stepWith('schedule:heartbeat', { q1: { outcome: 'answered', userId: 'UALICE', answer: 'restart it' }, q2: { outcome: 'answered', userId: 'UALICE', answer: 'prod' } });
    expect(turnInstigators(step)).toEqual(['UALICE']);
  });

  it('names someone who declined with a reason (the model reads it), not someone who declined without one', () => {
    const step = stepWith('schedule:heartbeat', { q1: { outcome: 'denied', userId: 'UALICE', reason: 'restart it instead' }, q2: { outcome: 'denied', userId: 'UBOB' } });
    expect(turnInstigators(step)).toEqual(['UALICE']);
  });

  it("names someone who denied a call with a reason, in anyone's turn, not someone who denied one without", () => {
    const step = stepWith('UBOB', { a1: { outcome: 'denied', userId: 'UALICE', reason: 'Restart payments-db in prod instead' }, a2: { outcome: 'denied', userId: 'UCAROL' } });
    expect(turnInstigators(step)).toEqual(['UALICE']);
  });

  it('leaves out the requester (already excluded as such), approvals, questions nobody answered, and denials no person made', () => {
    const step = stepWith('UALICE', {
      q1: { outcome: 'answered', userId: 'UALICE', answer: 'prod' },
      q2: { outcome: 'expired', userId: 'countersign' },
      a1: { outcome: 'approved', userId: 'UBOB', version: 0, inputHash: 'h', approvedBy: ['UBOB'] },
      a2: { outcome: 'denied', userId: 'hook:deploy-guard', reason: 'not during the freeze' },
    });
    expect(turnInstigators(step)).toEqual([]);
    expect(turnInstigators(stepWith('UALICE', { a1: { outcome: 'denied', userId: 'countersign', reason: 'the approval card could not be posted' } }))).toEqual([]);
  });
});
