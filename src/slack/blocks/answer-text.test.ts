import { describe, expect, it } from 'vitest';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import type { Decision } from '../../approvals/pending-step.js';
import { buildApprovalCard } from './approval-card.js';

/** Any bidi override, isolate or zero-width character, as they would reach Slack raw. */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;

function questionCard(answer: unknown): string {
  const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which target?', answerSchema: { type: 'object', properties: { answer: { type: 'object', properties: { service: { type: 'string' }, namespace: { type: 'string' } } } } } } }]);
  const step = { ...question, phase: 'complete' as const, decisions: { q1: { outcome: 'answered' as const, userId: question.requesterId, at: question.createdAt, answer } } };
  return JSON.stringify(buildApprovalCard({ step }).blocks);
}

/**
 * The card shows a form answer with one property named `answer` as that property's value, read with
 * `String(...)`. A model whose answerSchema is `{ answer: { type: 'object', properties: {...} } }`
 * gets an object there, and the card says "Answered by @alice: [object Object]": the thread (and
 * later approvers reading it) cannot see what was answered.
 */
describe('an answered question whose single `answer` property is an object', () => {
  it('shows the answer, not [object Object]', () => {
    const text = questionCard({ answer: { service: 'payments-db', namespace: 'prod' } });
    expect(text).not.toContain('[object Object]');
    expect(text).toContain('payments-db');
  });
});

/**
 * Arguments and change lines on the card write bidi overrides and zero-width characters as `\u202e`,
 * so text reordered to look harmless reads as what it is. Answers and deny reasons steer the model
 * too, and are revealed the same way.
 */
describe('invisible and reordering characters in answers and deny reasons', () => {
  it('reveals them in an answer, written or from a form', () => {
    for (const answer of ['drain \u202edorp\u202c first', { answer: 'drain \u202edorp\u202c first' }, { answer: { namespace: 'st\u200baging' } }, { service: 'a\u2066pi' }]) {
      const text = questionCard(answer);
      expect(text, JSON.stringify(answer)).not.toMatch(INVISIBLE);
      expect(text, JSON.stringify(answer)).toMatch(/\\\\u(202e|200b|2066)/);
    }
  });

  it('reveals them in a deny reason', () => {
    const request = makeStep([{ approvalId: 'a1', input: { service: 'api' } }]);
    const denied: Decision = { outcome: 'denied', userId: 'U0BOB', at: request.createdAt, reason: 'fine, \u202edeniapxe\u202c' };
    const text = JSON.stringify(buildApprovalCard({ step: { ...request, phase: 'complete', decisions: { a1: denied } } }).blocks);
    expect(text).not.toMatch(INVISIBLE);
    expect(text).toContain('Reason: fine, \\\\u202edeniapxe\\\\u202c');
  });
});
