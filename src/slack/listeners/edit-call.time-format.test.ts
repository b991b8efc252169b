import { describe, expect, it } from 'vitest';
import { isJsonSchemaTime } from '../../tools/json-schema-validator.js';
import { stateFromBlocks } from '../modals/view-state.test-support.js';
import { jsonSchemaEditForm, recordedInput, type OpenedForm } from './edit-call-form.test-support.js';

describe('Edit form of a JSON-Schema (MCP) tool with a `format: time` parameter', () => {
  // FastMCP / pydantic write `at: datetime.time | None` as format "time"; ajv-formats 3 (which
  // validates the edit) requires seconds and a time zone there, while a timepicker answers `HH:mm`.
  const schema = {
    type: 'object',
    properties: { service: { type: 'string' }, at: { anyOf: [{ type: 'string', format: 'time' }, { type: 'null' }], description: 'When to restart' } },
    required: ['service'],
  };
  const atBlockOf = (opened: OpenedForm) => opened.blocks.find((block) => block.type === 'input' && block.label.text === 'At');
  const errorsOf = (ack: { mock: { calls: unknown[][] } }) => (ack.mock.calls[0]?.[0] as { errors?: Record<string, string> } | undefined)?.errors ?? {};

  it('lets Bob set the time with the picker the form gives him (in UTC), and the server accepts it', async () => {
    const form = jsonSchemaEditForm(schema, { service: 'api' });
    const opened = await form.open();
    const atBlock = atBlockOf(opened);
    expect(atBlock.element.type).toBe('timepicker');

    const values = stateFromBlocks(opened.blocks);
    values[atBlock.block_id] = { [atBlock.element.action_id]: { type: 'timepicker', selected_time: '07:45', timezone: 'UTC' } as never };
    const ack = await form.submit(opened, values);

    // Validated by ajv and handed to the decider (which records nothing in this test).
    expect(errorsOf(ack)[atBlock.block_id]).toBeUndefined();
    expect(form.record).toHaveBeenCalledOnce();
    expect(recordedInput(form.record)).toEqual({ service: 'api', at: '07:45:00Z' });
    // Slack shows the zone under the picker, so Bob knows which 07:45 he picked.
    expect(atBlock.element.timezone).toBe('UTC');
  });

  it('keeps the model`s time untouched, in the picker when it is a whole UTC minute, else as text', async () => {
    for (const [at, element] of [
      ['06:30:00Z', 'timepicker'],
      ['06:30:00+02:00', 'plain_text_input'],
      ['06:30:15.5Z', 'plain_text_input'],
    ] as const) {
      const form = jsonSchemaEditForm(schema, { service: 'api', at });
      const opened = await form.open();
      expect(atBlockOf(opened).element.type).toBe(element);
      await form.submit(opened);
      expect(recordedInput(form.record)).toEqual({ service: 'api', at });
    }
  });

  it('refuses in the form, under the field, a typed time the server would refuse, and accepts what it accepts', async () => {
    const form = jsonSchemaEditForm(schema, { service: 'api', at: '06:30:00+02:00' });
    const opened = await form.open();
    const atBlock = atBlockOf(opened);
    for (const [typed, valid] of [
      ['07:45', false],
      ['07:45:00', false],
      ['24:00:00Z', false],
      ['07:45:00Z', true],
      ['07:45:00+0100', true],
    ] as const) {
      expect(isJsonSchemaTime(typed), typed).toBe(valid);
      form.record.mockClear();
      const values = stateFromBlocks(opened.blocks);
      values[atBlock.block_id] = { [atBlock.element.action_id]: { type: 'plain_text_input', value: typed } };
      const ack = await form.submit(opened, values);
      // Refused: by the form itself, with its own message; accepted: by the form and by ajv (recorded).
      expect(errorsOf(ack)[atBlock.block_id], typed).toBe(valid ? undefined : 'Must be a time with seconds and a time zone, e.g. 06:30:00Z or 06:30:00+02:00');
      expect(form.record.mock.calls.length, typed).toBe(valid ? 1 : 0);
    }
  });
});
