import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm, type SchemaForm } from './schema-form.js';
import { inputBlockAt, stateFromBlocks, type StateValues } from './view-state.test-support.js';

/**
 * pydantic: `class Opts: force: bool = False; grace: int | None = None` and
 * `opts: Opts = Opts(force=True, grace=30)`. The model leaves `opts` out, so the server would run with
 * grace 30. The form shows grace = 30; the approver empties it (no grace period: `null`).
 */
const schema: JsonSchema = {
  type: 'object',
  properties: {
    service: { type: 'string' },
    opts: {
      type: 'object',
      default: { force: true, grace: 30 },
      properties: { force: { type: 'boolean', default: false }, grace: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null } },
    },
  },
  required: ['service'],
};

function typed(form: SchemaForm, dottedPath: string, state: Record<string, unknown>): StateValues {
  const values = stateFromBlocks(form.blocks);
  const block = inputBlockAt(form, dottedPath);
  values[block.block_id!] = { [block.element.action_id!]: { type: block.element.type, ...state } };
  return values;
}

describe('review P: an input shown from an object default, emptied by the approver', () => {
  const form = buildSchemaForm({ schema, initialValue: { service: 'api' } });

  it('shows the object default', () => {
    expect((inputBlockAt(form, 'opts.grace').element as { initial_value?: string }).initial_value).toBe('30');
  });

  it('the emptied nullable input comes back as null, not as the object left out (whose default holds 30)', () => {
    // The same property at the top level, emptied, comes back null explicitly; inside the left-out object
    // the whole object is dropped instead, so the server fills grace: 30 again and the approver's edit is lost.
    const parsed = parseSchemaForm({ form, stateValues: typed(form, 'opts.grace', { value: null }) });
    expect(parsed).toEqual({ ok: true, value: { service: 'api', opts: { force: true, grace: null } } });
  });
});

describe('review P: control — the same property at the top level', () => {
  it('emptied, comes back as null explicitly', () => {
    const top: JsonSchema = { type: 'object', properties: { service: { type: 'string' }, grace: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: 30 } }, required: ['service'] };
    const form = buildSchemaForm({ schema: top, initialValue: { service: 'api' } });
    expect(parseSchemaForm({ form, stateValues: typed(form, 'grace', { value: null }) })).toEqual({ ok: true, value: { service: 'api', grace: null } });
  });
});
