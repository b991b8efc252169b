import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { CallDecider } from '../../approvals/decide-call.js';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import { registerAnswerQuestion } from './answer-question.js';
import { cardClick, failingStore, fakeBoltApp, recordingMessenger, storeWith } from './bolt-listener.test-support.js';
import { UNREADABLE_CALL_TEXT } from './read-call.js';

describe('an answer button while Redis cannot be read', () => {
  it('tells the clicker privately that nothing changed, and records nothing', async () => {
    const { app, action } = fakeBoltApp();
    const decider = { record: vi.fn(), publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
    const { messenger, ephemerals } = recordingMessenger();
    // Not a connection error, so it is not waited out: the click is answered at once.
    const store = failingStore(() => new Error('ERR max number of clients reached'));
    registerAnswerQuestion(app, { store, decider, messenger, logger: pino({ level: 'silent' }) });
    const { args } = cardClick({ actionId: 'countersign_answer_0', reference: { stepId: 'step01', approvalId: 'apv1' }, userId: 'U0ALICE' });
    await action('countersign_answer_0')(args);
    expect(args.ack).toHaveBeenCalledOnce();
    expect(ephemerals).toEqual([{ userId: 'U0ALICE', text: UNREADABLE_CALL_TEXT }]);
    expect(decider.record).not.toHaveBeenCalled();
  });
});

describe('an option clicked on a question already answered', () => {
  it('is judged by the decider, which refuses it and audits the refusal (as a late Approve)', async () => {
    const { app, action } = fakeBoltApp();
    const refusal = { recorded: false, message: 'Already answered by <@U0ALICE>, so nothing changed.' };
    const decider = { record: vi.fn(async () => refusal), publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
    const { messenger, ephemerals } = recordingMessenger();
    const step = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which namespace?', options: ['staging', 'prod'] } }], {
      decisions: { q1: { outcome: 'answered', userId: 'U0ALICE', at: 1_700_000_000_000, answer: 'prod' } },
    });
    registerAnswerQuestion(app, { store: storeWith(step), decider, messenger, logger: pino({ level: 'silent' }) });
    const { args } = cardClick({ actionId: 'countersign_answer_0', reference: { stepId: step.stepId, approvalId: 'q1' }, userId: 'U0BOB' });
    await action('countersign_answer_0')(args);
    expect(decider.record).toHaveBeenCalledWith(expect.objectContaining({ stepId: step.stepId, approvalId: 'q1', userId: 'U0BOB', action: { kind: 'answer', answer: 'staging' } }), expect.anything());
    expect(ephemerals).toEqual([{ userId: 'U0BOB', text: refusal.message }]);
  });
});
