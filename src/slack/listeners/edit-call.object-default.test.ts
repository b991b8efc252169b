import { describe, expect, it } from 'vitest';
import { stateFromBlocks } from '../modals/view-state.test-support.js';
import { jsonSchemaEditForm, recordedInput } from './edit-call-form.test-support.js';

/**
 * pydantic / FastMCP: `def restart(service: str, opts: Opts = Opts(force=True))` writes the
 * parameter's default on the object (`"default": {"force": true, "grace": 30}`), next to its
 * `$ref`; the model left `opts` out, so the server runs with force = true. The Edit form ignores an
 * object's own default: it shows `opts.force` with the property's default (unticked), so Bob reads
 * "force: no" on a call that will force; and if he changes `opts.grace` only, the form sends
 * `opts: {grace: 10}`, and the server fills force = false: his edit turned force off without his
 * touching it.
 */
describe('Edit form of an object parameter with a default of its own that the model left out', () => {
  const schema = {
    type: 'object',
    properties: {
      service: { type: 'string', title: 'Service' },
      opts: { $ref: '#/$defs/Opts', default: { force: true, grace: 30 } },
    },
    required: ['service'],
    $defs: {
      Opts: { type: 'object', title: 'Opts', properties: { force: { type: 'boolean', default: false, title: 'Force' }, grace: { type: 'integer', default: 30, title: 'Grace' } } },
    },
  };
  const blockOf = (blocks: any[], path: string) => blocks.find((block) => block.type === 'input' && block.label.text === path);

  it('shows opts.force as the object default sets it (ticked)', async () => {
    const opened = await jsonSchemaEditForm(schema, { service: 'api' }).open();
    const force = blockOf(opened.blocks, 'Force');
    expect(force.element.initial_options ?? []).toHaveLength(1);
  });

  it('keeps force = true when Bob changes only opts.grace', async () => {
    const form = jsonSchemaEditForm(schema, { service: 'api' });
    const opened = await form.open();
    const grace = blockOf(opened.blocks, 'Grace');
    const values = stateFromBlocks(opened.blocks);
    values[grace.block_id] = { [grace.element.action_id]: { type: 'number_input', value: '10' } };
    await form.submit(opened, values);
    expect(form.record).toHaveBeenCalledOnce();
    // What the server will run with: the form's value with the schema's defaults filled in.
    const sent = recordedInput(form.record) as { opts?: { force?: boolean; grace?: number } };
    expect({ force: sent.opts?.force ?? false, grace: sent.opts?.grace }).toEqual({ force: true, grace: 10 });
  });
});
