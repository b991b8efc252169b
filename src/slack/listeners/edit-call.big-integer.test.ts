import { describe, expect, it } from 'vitest';
import { stateFromBlocks } from '../modals/view-state.test-support.js';
import { jsonSchemaEditForm, recordedInput } from './edit-call-form.test-support.js';

/**
 * An MCP tool's `type: integer` parameter (no bounds: ajv accepts any integer) holding an id.
 * Ids past 2^53 (Snowflake ids of Discord, Twitter, many databases) are common. Bob types one into
 * the number input; parseDecimal turns it into the nearest double, validateNumber finds it a whole
 * number, ajv accepts it, and the decider is asked to record - and, with Bob's approval alone,
 * run - another id than the one Bob typed and saw in the form.
 */
describe('Edit form: an integer typed past 2^53', () => {
  const schema = { type: 'object', properties: { message_id: { type: 'integer', description: 'The message to delete' } }, required: ['message_id'] };

  it('is never recorded as another number than the one typed', async () => {
    const form = jsonSchemaEditForm(schema, { message_id: 1 });
    const opened = await form.open();
    const block = opened.blocks.find((candidate) => candidate.type === 'input');
    expect(block.element.type).toBe('number_input');
    const typed = '1234567890123456789';
    const values = stateFromBlocks(opened.blocks);
    values[block.block_id] = { [block.element.action_id]: { type: 'number_input', value: typed } };

    const ack = await form.submit(opened, values);

    const errors = (ack.mock.calls[0]?.[0] as { errors?: Record<string, string> } | undefined)?.errors;
    // Either the form refuses the number it cannot hold exactly, or the id recorded is the one typed.
    const outcome = form.record.mock.calls.length === 0 ? { refused: errors?.[block.block_id] !== undefined } : { recorded: String((recordedInput(form.record) as { message_id: number }).message_id) };
    expect(outcome).toSatisfy((value: { refused?: boolean; recorded?: string }) => value.refused === true || value.recorded === typed);
  });
});
