import { describe, expect, it } from 'vitest';
import { stateFromBlocks } from '../modals/view-state.test-support.js';
import { jsonSchemaEditForm, recordedInput, type OpenedForm } from './edit-call-form.test-support.js';

/**
 * FastMCP / pydantic write every optional parameter (`note: str | None = None`) as a union with
 * null AND `"default": null`. The model usually leaves such parameters out. The Edit form then
 * prefills the input with the default, `null`, which no text box, number box or picker can show,
 * so each of them becomes a "(JSON)" box holding `null`: to add a note, Bob must type a JSON
 * string with its quotes; typed as text, as the label "Note" invites, the form refuses it.
 * The same parameter without `default: null` (or with the model's explicit `null`) gets a plain
 * text box.
 */
describe('Edit form of a FastMCP tool with optional `str | None = None` parameters the model left out', () => {
  const schema = {
    type: 'object',
    properties: {
      service: { title: 'Service', type: 'string' },
      note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Note' },
      at: { anyOf: [{ type: 'string', format: 'time' }, { type: 'null' }], default: null, title: 'At' },
    },
    required: ['service'],
  };
  const blockOf = (opened: OpenedForm, title: string) => opened.blocks.find((block) => block.type === 'input' && block.label.text.startsWith(title));
  const errorsOf = (ack: { mock: { calls: unknown[][] } }) => (ack.mock.calls[0]?.[0] as { errors?: Record<string, string> } | undefined)?.errors ?? {};

  it('gets the same widgets as when the model sent null explicitly (for comparison: a text box and a time picker)', async () => {
    const opened = await jsonSchemaEditForm(schema, { service: 'api', note: null, at: null }).open();
    expect({ note: blockOf(opened, 'Note').element.type, noteLabel: blockOf(opened, 'Note').label.text, at: blockOf(opened, 'At').element.type }).toEqual({
      note: 'plain_text_input',
      noteLabel: 'Note',
      at: 'timepicker',
    });
  });

  it('shows a text box and a time picker for them, not JSON boxes holding null', async () => {
    const opened = await jsonSchemaEditForm(schema, { service: 'api' }).open();
    const note = blockOf(opened, 'Note');
    const at = blockOf(opened, 'At');
    expect({ noteLabel: note.label.text, noteValue: note.element.initial_value, at: at.element.type }).toEqual({ noteLabel: 'Note', noteValue: undefined, at: 'timepicker' });
  });

  it('takes a note Bob types as text', async () => {
    const form = jsonSchemaEditForm(schema, { service: 'api' });
    const opened = await form.open();
    const note = blockOf(opened, 'Note');
    const values = stateFromBlocks(opened.blocks);
    values[note.block_id] = { [note.element.action_id]: { type: 'plain_text_input', value: 'drain the node first' } };
    const ack = await form.submit(opened, values);
    // The form's own errors, if it refused; once the decider is asked, the test's decider refuses (see jsonSchemaEditForm).
    expect(form.record.mock.calls.length === 0 ? errorsOf(ack) : {}).toEqual({});
    expect(form.record).toHaveBeenCalledOnce();
    expect(recordedInput(form.record)).toEqual({ service: 'api', note: 'drain the node first' });
  });

  it('leaves them out again when the form is submitted untouched, and keeps the model\'s explicit null', async () => {
    const omitted = jsonSchemaEditForm(schema, { service: 'api' });
    await omitted.submit(await omitted.open());
    const explicit = jsonSchemaEditForm(schema, { service: 'api', note: null });
    await explicit.submit(await explicit.open());
    expect({ omitted: recordedInput(omitted.record), explicit: recordedInput(explicit.record) }).toEqual({
      omitted: { service: 'api' },
      explicit: { service: 'api', note: null },
    });
  });
});
