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

describe('Edit keeps what the approver did not touch', () => {
  it('keeps an explicit null of a union-typed parameter (a Python MCP server`s `int | str | None = "25%"`)', async () => {
    const ranWith: unknown[] = [];
    const scale = defineTool({
      name: 'scale_deployment',
      description: 'Scale a deployment',
      // What pydantic / FastMCP emit for `max_surge: int | str | None = "25%"`: null means "no surge", absent means 25%.
      inputSchema: jsonSchema<{ deployment: string; replicas: number; max_surge?: number | string | null }>({
        type: 'object',
        properties: {
          deployment: { type: 'string' },
          replicas: { type: 'integer' },
          max_surge: { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }], default: '25%' },
        },
        required: ['deployment', 'replicas'],
      }),
      approval: 'always',
      execute: async (input) => {
        ranWith.push(input);
        return { ok: true };
      },
    });
    const h = await harness({ tools: [scale] });
    const { threadTs, card, button } = await pausedOn(h, { name: 'scale_deployment', arguments: { deployment: 'api', replicas: 3, max_surge: null } }, 'Scaled.');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const view = await openedView(h);
    // The approver sees the null, as JSON text.
    const surgeInput = view.blocks.find((block) => block.type === 'input' && String(block.label?.text).startsWith('Max surge'));
    expect(surgeInput?.element?.initial_value).toBe('null');
    // Bob only changes the replicas.
    await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Replicas: 5 }) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Scaled.'), { message: 'answer' });
    const updated = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    const cardText = (updated.blocks ?? []).map((block: any) => block.text?.text ?? '').join('\n');
    const changes = cardText.split('\n').filter((line: string) => line.startsWith('• '));
    const result = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text ?? '';
    // The call must run with max_surge still null; the card and the model should list only replicas as changed.
    const toldModel = (JSON.parse(result) as { humanEdit: { changes: string[] } }).humanEdit.changes;
    expect({ ranWith, changes, toldModel }).toEqual({
      ranWith: [{ deployment: 'api', replicas: 5, max_surge: null }],
      changes: ['• replicas: 3 → 5'],
      toldModel: ['replicas: 3 → 5'],
    });
  });

  it('keeps an object whose keys the schema does not list (the form says "kept unchanged")', async () => {
    const ranWith: unknown[] = [];
    const label = defineTool({
      name: 'label_pod',
      description: 'Set labels',
      inputSchema: jsonSchema<{ pod: string; metadata?: Record<string, unknown> }>({
        type: 'object',
        properties: {
          pod: { type: 'string' },
          metadata: { type: 'object', properties: { owner: { type: 'string' } } },
        },
        required: ['pod'],
      }),
      approval: 'always',
      execute: async (input) => {
        ranWith.push(input);
        return { ok: true };
      },
    });
    const h = await harness({ tools: [label] });
    const { threadTs, card, button } = await pausedOn(h, { name: 'label_pod', arguments: { pod: 'api-1', metadata: { team: 'payments' } } }, 'Labelled.');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const view = await openedView(h);
    expect(JSON.stringify(view.blocks)).toContain('Not in the form, kept unchanged: metadata.team');
    await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Pod: 'api-2' }) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Labelled.'), { message: 'answer' });
    expect(ranWith).toEqual([{ pod: 'api-2', metadata: { team: 'payments' } }]);
  });
});
