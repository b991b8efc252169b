import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { fillForm } from './fill-form.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * `answerSchemaOf` falls back to free text when the model's schema requires a property it does not
 * list (`properties: { reason }, required: ["answer"]`), since the form offers only listed
 * properties and every submit would be refused. It checks the top level only: the same slip one
 * level down (an object property whose `required` names a property it does not list) builds a form
 * that no submit can satisfy. The requester fills in everything the form shows and is refused with
 * "name: is required" under a field that is not "name", every time: the question can only be declined.
 * The check now goes down into nested objects: such a schema gets the free-text form instead.
 */
describe('ask_user: an answerSchema whose nested object requires a property it does not list', () => {
  it('takes the answer the requester gives in the form', async () => {
    const h = await harness();
    const answerSchema = {
      type: 'object',
      properties: { target: { type: 'object', title: 'Target', properties: { service: { type: 'string', title: 'Service' } }, required: ['name'] } },
      required: ['target'],
    };
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'Which service should I restart?', answerSchema } }] }, { text: 'Restarting it.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart something', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_reply')), { message: 'the question' });
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_reply')! });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the Reply form' })).args.view;

    // As at the top level, a schema no submit could satisfy gives way to free text.
    expect(view.blocks.filter((block: { type: string }) => block.type === 'input').map((block: { label: { text: string } }) => block.label.text)).toEqual(['Answer']);
    const response = await h.submitView({ user: 'UALICE', view, values: fillForm(view, { Answer: 'worker' }) });
    expect(await response.text(), 'the form refuses every answer it can take').not.toContain('"response_action":"errors"');
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarting it.'), { message: 'the turn resumed with the answer' });
    const result = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(result?.text).toContain('worker');
  });
});
