import { describe, expect, it } from 'vitest';
import { jsonSchemaEditForm, recordedInput } from './edit-call-form.test-support.js';

describe('Edit form of a JSON-Schema tool whose object parameter has `properties` but no `type`', () => {
  // Without `type`, `properties` constrains objects only: a string, array or null is a valid value
  // (ajv agrees), and the MCP server accepted the model's call. A group of inputs cannot show such
  // a value, so the form shows it as JSON text.
  const schema = {
    type: 'object',
    properties: {
      service: { type: 'string' },
      options: { description: 'Restart options, or a preset name', properties: { force: { type: 'boolean' }, grace: { type: 'integer' } } },
    },
    required: ['service'],
  };

  it('shows what the model sent and gives it back when Bob changes nothing (a preset name)', async () => {
    const input = { service: 'api', options: 'drain-first' };
    const form = jsonSchemaEditForm(schema, input);
    expect(await form.toolSchemas.validate('restart_service', input)).toEqual({ success: true, value: input });
    const opened = await form.open();
    const options = opened.blocks.find((block) => block.type === 'input' && block.label.text.startsWith('Options'));
    expect(options.element.initial_value).toBe('"drain-first"');

    await form.submit(opened);

    // Submitting untouched is Bob's "Approve & run" of what he saw: it must be the model's input.
    expect(form.record).toHaveBeenCalledOnce();
    expect(recordedInput(form.record)).toEqual(input);
  });

  it('gives back an explicit null when Bob changes nothing', async () => {
    const input = { service: 'api', options: null };
    const form = jsonSchemaEditForm(schema, input);
    expect((await form.toolSchemas.validate('restart_service', input)).success).toBe(true);
    const opened = await form.open();

    await form.submit(opened);

    expect(form.record).toHaveBeenCalledOnce();
    expect(recordedInput(form.record)).toEqual(input);
  });

  it('gives back an array when Bob changes nothing', async () => {
    const input = { service: 'api', options: [1] };
    const form = jsonSchemaEditForm(schema, input);
    expect((await form.toolSchemas.validate('restart_service', input)).success).toBe(true);

    await form.submit(await form.open());

    expect(form.record).toHaveBeenCalledOnce();
    expect(recordedInput(form.record)).toEqual(input);
  });
});
