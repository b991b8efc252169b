import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { fillForm } from './fill-form.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * Models often write a complete JSON Schema for `answerSchema`, `$id` included. The bot's one ajv
 * instance registers a schema under its `$id` the first time it compiles it; the Reply form is built
 * from one read of the step (compiled: registered) and the submit from another (a new object with
 * the same `$id`: ajv throws "schema with key or id already exists"), so `isUsable` is false at
 * submit and the answer is read against the free-text fallback instead of the form that was shown.
 */
describe('ask_user: an answerSchema with $id', () => {
  it('takes the answer the requester typed into the Reply form and gives it to the model', async () => {
    const h = await harness();
    const answerSchema = { $id: 'restart-answer', type: 'object', properties: { replicas: { type: 'integer', title: 'Replicas', minimum: 1 } }, required: ['replicas'] };
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'How many replicas should I scale to?', answerSchema } }] }, { text: 'Scaling.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'scale the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_reply')), { message: 'the question' });
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_reply')! });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the Reply form' })).args.view;
    // The form shown is the model's schema (a Replicas number field).
    expect(JSON.stringify(view.blocks)).toContain('Replicas');

    const response = await h.submitView({ user: 'UALICE', view, values: fillForm(view, { Replicas: 3 }) });
    const body = await response.text();
    expect(body, 'the submit is refused with an error on a field the form does not have').not.toContain('errors');
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Scaling.'), { message: 'the turn resumed with the answer' });
    const result = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(JSON.parse(result?.text ?? '{}')).toEqual({ answeredBy: '<@UALICE>', answer: { replicas: 3 } });
  });
});
