import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { CallDecider } from '../../approvals/decide-call.js';
import { registerAnswerQuestion } from './answer-question.js';
import { cardClick, failingStore, fakeBoltApp, recordingMessenger } from './bolt-listener.test-support.js';
import { UNREADABLE_CALL_TEXT } from './read-call.js';

describe('an answer button while Redis cannot be read', () => {
  it('tells the clicker privately that nothing changed, and records nothing', async () => {
    const { app, action } = fakeBoltApp();
    const decider = { record: vi.fn(), publish: vi.fn() } as unknown as CallDecider;
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
