import { describe, expect, it } from 'vitest';
import { prepareAuditEvent } from '../../audit/prepare-audit-event.js';
import type { PendingStep } from '../pending-step.js';
import { CHANNEL, CREATED_AT, evaluation, makeStep, REQUESTER, TEAM } from '../pending-step.test-support.js';
import { applyCallAction, type CallAction, type CallActionResult } from './call-action.js';

const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const THREAD_TS = '1700000000.000100';
const here = { teamId: TEAM, channel: CHANNEL, membership: 'member' as const };

function transition(step: PendingStep, userId: string, action: CallAction): Extract<CallActionResult, { ok: true }>['transition'] {
  const result = applyCallAction(
    step,
    { stepId: step.stepId, approvalId: step.calls[0]!.approvalId, userId, origin: here, action },
    { now: CREATED_AT + 1_000, groupMembers: new Map(), newGrantId: () => 'grant1' },
  );
  if (!result.ok) throw new Error(`refused: ${result.refusal.message}`);
  return result.transition;
}

/**
 * A decision read in a SIEM says where it happened without a join by `stepId` to the request, and
 * an answer to `ask_user` (which steers the turn as a deny reason does) is in the trail.
 */
describe('decision and edit audit records', () => {
  it("carry the step's channel and thread: counted and deciding approvals, edits, denials, answers", () => {
    const quorum = makeStep([{ approvalId: 'a1', input: { service: 'worker' }, policy: evaluation({ required: 2 }) }]);
    const edited = transition(quorum, BOB, { kind: 'edit', fromVersion: 0, input: { service: 'api' }, submittedInput: { service: 'api' }, policy: evaluation({ required: 2 }) });
    // The editor's edit counts as their approval: Carol's decides it.
    const decided = transition(edited.step, CAROL, { kind: 'approve', version: 1 });
    const counted = transition(quorum, CAROL, { kind: 'approve', version: 0 });
    const denied = transition(quorum, BOB, { kind: 'deny', reason: 'not now' });
    const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which region?' } }]);
    const answered = transition(question, REQUESTER, { kind: 'answer', answer: 'eu' });
    const events = [edited, counted, decided, denied, answered].flatMap((each) => each.audit);
    // The edit also counts as the editor's approval.
    expect(events.map((event) => (event.type === 'decision' ? `${event.outcome}${event.quorum ? ` ${event.quorum.have}/${event.quorum.need}` : ''}` : event.type))).toEqual([
      'input-edited',
      'approved 1/2',
      'approved 1/2',
      'approved 2/2',
      'denied',
      'answered',
    ]);
    for (const event of events) expect(event).toMatchObject({ channel: CHANNEL, threadTs: THREAD_TS });
  });

  it('records what was answered, with secret-looking fields of a form answer redacted as inputs are', () => {
    const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Credentials for the replica?' } }]);
    const [event] = transition(question, REQUESTER, { kind: 'answer', answer: { host: 'db-2', password: 'hunter2' } }).audit;
    expect(event).toMatchObject({ type: 'decision', outcome: 'answered', answer: { host: 'db-2', password: 'hunter2' } });
    const stored = JSON.stringify(prepareAuditEvent(event!, () => 0));
    expect(stored).toContain('"answer":{"host":"db-2","password":"[redacted]"}');
    expect(stored).not.toContain('hunter2');
  });

  it('has no answer on other decisions', () => {
    const step = makeStep([{ approvalId: 'a1', input: { service: 'worker' } }]);
    expect(transition(step, BOB, { kind: 'deny' }).audit[0]).not.toHaveProperty('answer');
  });
});
