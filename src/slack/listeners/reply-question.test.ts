import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { CallDecider } from '../../approvals/decide-call.js';
import { createJsonSchemaValidator } from '../../tools/json-schema-validator.js';
import { REPLY_CALLBACK_ID } from '../views/reply-view.js';
import { failingStore, fakeBoltApp, formSubmit, recordingMessenger } from './bolt-listener.test-support.js';
import { UNREADABLE_CALL_TEXT } from './read-call.js';
import { registerReplyQuestion } from './reply-question.js';

describe('submitting a Reply while Redis cannot be read', () => {
  it('shows the failure in the form, which keeps the answer, and records nothing', async () => {
    const { app, view } = fakeBoltApp();
    const decider = { record: vi.fn(), publish: vi.fn() } as unknown as CallDecider;
    registerReplyQuestion(app, { store: failingStore(), decider, messenger: recordingMessenger().messenger, validator: createJsonSchemaValidator(), logger: pino({ level: 'silent' }) });
    const { args, ack } = formSubmit({ reference: { stepId: 'step01', approvalId: 'apv1' }, blocks: [{ type: 'section' }, { type: 'input', block_id: 'answer' }] });
    await view(REPLY_CALLBACK_ID)(args);
    expect(ack).toHaveBeenCalledExactlyOnceWith({ response_action: 'errors', errors: { answer: UNREADABLE_CALL_TEXT } });
    expect(decider.record).not.toHaveBeenCalled();
  });
});
