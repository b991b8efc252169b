import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { makeStep, REQUESTER } from '../../approvals/pending-step.test-support.js';
import { CHOOSE_AN_OPTION_TEXT } from '../../approvals/question-options.js';
import { answerSchemaOf } from '../../tools/ask-user.js';
import { createJsonSchemaValidator } from '../../tools/json-schema-validator.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import { buildSchemaForm } from '../modals/schema-form.js';
import { REPLY_CALLBACK_ID } from '../views/reply-view.js';
import { cardClick, fakeBoltApp, formSubmit, recordingMessenger, storeWith } from './bolt-listener.test-support.js';
import { registerReplyQuestion } from './reply-question.js';

/**
 * A question with options: the card offers only the option buttons (no Reply), and the option
 * buttons take the answer from the stored options, "never from the click payload". The Reply
 * button's action and its form submit do not check that the question has options, so a Reply click
 * carrying the question's value opens a free-text form, and its submit records any text as the
 * answer: a value outside the options the model offered.
 */
describe('Reply on a question that offers options', () => {
  const step = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Restart in which namespace?', options: ['staging', 'dev'] } }]);
  const validator = createJsonSchemaValidator();
  const setup = () => {
    const { app, action, view } = fakeBoltApp();
    const decider = { record: vi.fn(async () => ({ recorded: true })), publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
    const { messenger, ephemerals } = recordingMessenger();
    registerReplyQuestion(app, { store: storeWith(step), channelsOf: async () => new Set([step.channel]), decider, messenger, validator, logger: pino({ level: 'silent' }), audit: createMemoryAuditLog({ logger: pino({ level: 'silent' }) }) });
    return { action, view, decider, ephemerals };
  };

  it('does not open a free-text form, and says why privately', async () => {
    const { action, ephemerals } = setup();
    const { args, views } = cardClick({ actionId: APPROVAL_ACTION_IDS.reply, reference: { stepId: step.stepId, approvalId: 'q1' }, userId: REQUESTER });
    await action(APPROVAL_ACTION_IDS.reply)(args);
    expect(views.open).not.toHaveBeenCalled();
    expect(ephemerals).toEqual([{ userId: REQUESTER, text: CHOOSE_AN_OPTION_TEXT }]);
  });

  it('does not record an answer that is none of the options', async () => {
    const { view, decider } = setup();
    const form = buildSchemaForm({ schema: answerSchemaOf(step.calls[0]!.input as never, (schema) => validator.isUsable(schema)), timeFormat: 'full-time' });
    const values = Object.fromEntries(form.inputBlockIds.map((blockId) => [blockId, { 'w.f': { type: 'plain_text_input', value: 'prod' }, 'j.f': { type: 'plain_text_input', value: '"prod"' } }]));
    const { args, ack } = formSubmit({ reference: { stepId: step.stepId, approvalId: 'q1' }, blocks: form.blocks as never, values });
    (args.body.user as { id: string }).id = REQUESTER;
    await view(REPLY_CALLBACK_ID)(args);
    expect(decider.record).not.toHaveBeenCalled();
    expect(ack).toHaveBeenCalledWith(expect.objectContaining({ response_action: 'errors' }));
  });
});
