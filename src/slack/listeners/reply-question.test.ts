import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import { createJsonSchemaValidator } from '../../tools/json-schema-validator.js';
import { buildSchemaForm } from '../modals/schema-form.js';
import { REPLY_CALLBACK_ID } from '../views/reply-view.js';
import { failingStore, fakeBoltApp, formSubmit, recordingMessenger, storeWith } from './bolt-listener.test-support.js';
import { UNREADABLE_CALL_TEXT } from './read-call.js';
import { registerReplyQuestion } from './reply-question.js';

describe('submitting a Reply while Redis cannot be read', () => {
  it('shows the failure in the form, which keeps the answer, and records nothing', async () => {
    const { app, view } = fakeBoltApp();
    const decider = { record: vi.fn(), publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
    registerReplyQuestion(app, { store: failingStore(), channelsOf: async () => undefined, decider, messenger: recordingMessenger().messenger, validator: createJsonSchemaValidator(), logger: pino({ level: 'silent' }), audit: createMemoryAuditLog({ logger: pino({ level: 'silent' }) }) });
    const { args, ack } = formSubmit({ reference: { stepId: 'step01', approvalId: 'apv1' }, blocks: [{ type: 'section' }, { type: 'input', block_id: 'answer' }] });
    await view(REPLY_CALLBACK_ID)(args);
    expect(ack).toHaveBeenCalledExactlyOnceWith({ response_action: 'errors', errors: { answer: UNREADABLE_CALL_TEXT } });
    expect(decider.record).not.toHaveBeenCalled();
  });
});

/**
 * The model names a required property it did not list under `properties` (properties { reason },
 * required [ "answer" ]): ajv compiles it and it is satisfiable ({ reason, answer }), but a form of
 * the listed properties offers only "Reason", so every submit would be refused with "is required".
 */
describe('Reply on a question whose answer schema requires a property it does not list', () => {
  const answerSchema = { type: 'object', properties: { reason: { type: 'string' } }, required: ['answer'] };

  it('takes a free-text answer instead, so the question stays answerable', async () => {
    const step = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Why should I restart it?', answerSchema } }]);
    const form = buildSchemaForm({ schema: answerSchema as never });
    const { app, view } = fakeBoltApp();
    const decider = { record: vi.fn(async () => ({ recorded: true })), publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
    registerReplyQuestion(app, { store: storeWith(step), channelsOf: async () => new Set([step.channel]), decider, messenger: recordingMessenger().messenger, validator: createJsonSchemaValidator(), logger: pino({ level: 'silent' }), audit: createMemoryAuditLog({ logger: pino({ level: 'silent' }) }) });
    // Every input the form offers, filled in as the requester would.
    const values = Object.fromEntries(form.inputBlockIds.map((blockId) => [blockId, { 'w.f': { type: 'plain_text_input', value: 'it is stuck' }, 'j.f': { type: 'plain_text_input', value: '{"reason":"stuck","answer":"yes"}' } }]));
    const { args, ack } = formSubmit({ reference: { stepId: step.stepId, approvalId: 'q1' }, blocks: form.blocks as never, values });
    (args.body.user as { id: string }).id = step.requesterId;
    await view(REPLY_CALLBACK_ID)(args);
    expect(ack).not.toHaveBeenCalledWith(expect.objectContaining({ response_action: 'errors' }));
    expect(decider.record).toHaveBeenCalledOnce();
  });
});
