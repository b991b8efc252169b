import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/tool-definition.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

async function pausedOn(h: Harness, call: { name: string; arguments: Record<string, unknown> }, ...then: string[]) {
  h.openai.enqueue({ toolCalls: [call] }, ...then.map((text) => ({ text })));
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'please do it', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;
  return { threadTs, card, button };
}

async function openedView(h: Harness) {
  const call = await waitFor(() => h.slack.callsTo('views.open').at(-1), { message: 'views.open' });
  return call.args.view as { callback_id: string; private_metadata: string; blocks: any[] };
}

describe('Edit: a modal generated from the tool schema', () => {
  it('runs the edited command, shows the change on the card and tells the model', async () => {
    const h = await harness();
    const { threadTs, card, button } = await pausedOn(h, { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }, 'Restarted worker-2 in staging as edited.');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const view = await openedView(h);
    const labels = view.blocks.filter((block) => block.type === 'input').map((block) => block.label.text);
    expect(labels).toEqual(['Service', 'Namespace']);
    expect(JSON.stringify(view.blocks)).toContain('"worker"');

    const response = await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Service: 'worker-2', Namespace: 'staging' }) });
    expect(response.status).toBe(200);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted worker-2 in staging as edited.'), { message: 'answer' });

    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker-2', '-n', 'staging']]);
    const updated = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    const cardText = JSON.stringify(updated.blocks);
    expect(cardText).toContain('Approved by <@UBOB>');
    expect(cardText).toContain('Version 2*, edited by <@UBOB>');
    expect(cardText).toContain('namespace: \\"prod\\" → \\"staging\\"');

    // The model's call stays as the model made it; the result says it ran with the human's version.
    const conversation = conversationOf(h.openai.requests[1]!);
    const call = conversation.flatMap((message) => message.toolCalls ?? []).find((toolCall) => toolCall.name === 'restart_service');
    expect(JSON.parse(call!.arguments)).toEqual({ service: 'worker', namespace: 'prod' });
    const result = conversation.find((message) => message.role === 'tool')?.text ?? '';
    expect(result).toContain('<@UBOB> changed this call');
    expect(result).toContain('namespace: \\"prod\\" → \\"staging\\"');
    expect(result).toContain('"ranWithInput":{"service":"worker-2","namespace":"staging"}');

    // The audit trail keeps both inputs and says which one ran.
    const audit = await waitFor(async () => {
      const events = await h.auditEvents();
      return events.some((event) => event.type === 'tool-started') ? events : undefined;
    });
    expect(audit.find((event) => event.type === 'input-edited')).toMatchObject({ userId: 'UBOB', version: 1, input: { service: 'worker-2', namespace: 'staging' } });
    expect(audit.find((event) => event.type === 'decision')).toMatchObject({ version: 1, originalInput: { service: 'worker', namespace: 'prod' }, editedInput: { service: 'worker-2', namespace: 'staging' } });
    expect(audit.find((event) => event.type === 'tool-started')).toMatchObject({ input: { service: 'worker-2', namespace: 'staging' }, basis: { kind: 'approval', version: 1 } });
  });

  it('shows an invalid edit as an error on the field and runs nothing', async () => {
    const h = await harness();
    const { threadTs, card, button } = await pausedOn(h, { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }, 'never');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const view = await openedView(h);
    const serviceBlock = view.blocks.find((block) => block.type === 'input' && block.label.text === 'Service');

    const response = await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Service: 'worker; rm -rf /' }) });
    const body = (await response.json()) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.keys(body.errors)).toEqual([serviceBlock.block_id]);
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect(h.openai.requests).toHaveLength(1);
    const unchanged = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(cardButtons(unchanged.blocks).length).toBeGreaterThan(0);
  });

  it('approves as is when the form is submitted without changes', async () => {
    const h = await harness();
    const { threadTs, card, button } = await pausedOn(h, { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }, 'Done.');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const view = await openedView(h);
    await h.submitView({ user: 'UBOB', view, values: fillForm(view, {}) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { message: 'answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
    const updated = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updated.blocks)).toContain('Approved by <@UBOB>');
  });
});

describe('Edit: defaults shown for arguments the model left out', () => {
  it('runs with false when the approver unticks a checkbox shown ticked by its default', async () => {
    const ranWith: unknown[] = [];
    const deploy = defineTool({
      name: 'deploy_service',
      description: 'Deploy a service',
      // A JSON Schema tool (as MCP tools are): nothing fills in the default before the tool runs, the tool does.
      inputSchema: jsonSchema<{ service: string; wait?: boolean }>({
        type: 'object',
        properties: { service: { type: 'string' }, wait: { type: 'boolean', default: true } },
        required: ['service'],
        additionalProperties: false,
      }),
      approval: 'always',
      execute: async (input) => {
        ranWith.push(input);
        return { deployed: input.service, waited: input.wait ?? true };
      },
    });
    const h = await harness({ tools: [deploy] });
    const { threadTs, card, button } = await pausedOn(h, { name: 'deploy_service', arguments: { service: 'api' } }, 'Deployed without waiting.');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const view = await openedView(h);
    const wait = view.blocks.find((block) => block.type === 'input' && block.label.text === 'Wait');
    expect(wait.element).toMatchObject({ type: 'checkboxes', initial_options: [{ value: 'true' }] });

    await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Wait: [] }) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Deployed without waiting.'), { message: 'answer' });
    expect(ranWith).toEqual([{ service: 'api', wait: false }]);
  });
});

describe('ask_user with an answer schema', () => {
  it('opens a form from the schema, rejects an invalid answer and passes the valid one to the model', async () => {
    const h = await harness();
    const answerSchema = {
      type: 'object',
      properties: { replicas: { type: 'integer', minimum: 1, maximum: 10, description: 'How many replicas' }, note: { type: 'string' } },
      required: ['replicas'],
    };
    const { threadTs, card, button } = await pausedOn(h, { name: 'ask_user', arguments: { question: 'How many replicas?', answerSchema } }, 'Scaling to 3.');
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...button('countersign_reply') });
    const view = await openedView(h);
    expect(view.callback_id).toBe('countersign_reply');

    const tooMany = await h.submitView({ user: 'UALICE', view, values: fillForm(view, { Replicas: 20 }) });
    const errors = (await tooMany.json()) as { response_action: string };
    expect(errors.response_action).toBe('errors');

    const ok = await h.submitView({ user: 'UALICE', view, values: fillForm(view, { Replicas: 3, Note: 'peak traffic' }) });
    expect(ok.status).toBe(200);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Scaling to 3.'), { message: 'answer' });
    const result = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text ?? '';
    expect(JSON.parse(result)).toEqual({ answeredBy: '<@UALICE>', answer: { replicas: 3, note: 'peak traffic' } });
  });
});
