import type { JSONSchema7 } from 'ai';
import { describe, expect, it } from 'vitest';
import { createJsonSchemaValidator } from '../../tools/json-schema-validator.js';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm, type SchemaForm } from './schema-form.js';
import { inputBlockAt, stateFromBlocks, type StateValues } from './view-state.test-support.js';

/** As the server applies defaults (ajv useDefaults). */
function asServerRuns(schema: JsonSchema, input: unknown): unknown {
  const result = createJsonSchemaValidator({ applyDefaults: true }).validate(schema as JSONSchema7, input);
  if (!result.success) throw new Error(JSON.stringify(result.issues));
  return result.value;
}

function emptied(form: SchemaForm, dottedPath: string): StateValues {
  const values = stateFromBlocks(form.blocks);
  const block = inputBlockAt(form, dottedPath);
  values[block.block_id!] = { [block.element.action_id!]: { type: block.element.type, value: null } };
  return values;
}

describe('review Q-1: emptying a nullable input the model set, inside an object the model sent', () => {
  // pydantic: `class Opts: grace: int | None = 30` and `opts: Opts = Opts()`.
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      service: { type: 'string' },
      opts: { type: 'object', default: { grace: 30 }, properties: { grace: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: 30 } } },
    },
    required: ['service'],
  };

  it('comes back null (clearedField: "it held a value: null if nullable"), not dropped with its object so the default runs 30', () => {
    const form = buildSchemaForm({ schema, initialValue: { service: 'api', opts: { grace: 10 } } });
    const parsed = parseSchemaForm({ form, stateValues: emptied(form, 'opts.grace') });
    expect(parsed).toEqual({ ok: true, value: { service: 'api', opts: { grace: null } } });
    expect(asServerRuns(schema, (parsed as { value: unknown }).value)).toEqual({ service: 'api', opts: { grace: null } });
  });

  it('control: the same property at the top level comes back null', () => {
    const top: JsonSchema = { type: 'object', properties: { service: { type: 'string' }, grace: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: 30 } }, required: ['service'] };
    const form = buildSchemaForm({ schema: top, initialValue: { service: 'api', grace: 10 } });
    expect(parseSchemaForm({ form, stateValues: emptied(form, 'grace') })).toEqual({ ok: true, value: { service: 'api', grace: null } });
  });
});

describe('review Q-2: emptying a non-nullable input shown from the default of an object the model left out', () => {
  // `opts: Opts = Opts(mode="fast")` where `class Opts: mode: str = "safe"`. The form shows mode = fast,
  // hint "Default: "safe"". Emptied, a text input means "not set: the default its hint names applies".
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      service: { type: 'string' },
      opts: { type: 'object', default: { mode: 'fast' }, properties: { mode: { type: 'string', default: 'safe' } } },
    },
    required: ['service'],
  };

  it('leaves the property out of a kept object, so its own default ("safe", the hint) runs, not the "fast" the approver removed', () => {
    const form = buildSchemaForm({ schema, initialValue: { service: 'api' } });
    expect((inputBlockAt(form, 'opts.mode').element as { initial_value?: string }).initial_value).toBe('fast');
    expect(inputBlockAt(form, 'opts.mode').hint?.text).toContain('safe');
    const parsed = parseSchemaForm({ form, stateValues: emptied(form, 'opts.mode') });
    expect(parsed.ok).toBe(true);
    expect(asServerRuns(schema, (parsed as { value: unknown }).value)).toEqual({ service: 'api', opts: { mode: 'safe' } });
  });

  it('… and with no default of its own, the property is left out, not run with the removed value', () => {
    const bare: JsonSchema = {
      type: 'object',
      properties: { service: { type: 'string' }, opts: { type: 'object', default: { mode: 'fast' }, properties: { mode: { type: 'string' } } } },
      required: ['service'],
    };
    const form = buildSchemaForm({ schema: bare, initialValue: { service: 'api' } });
    const parsed = parseSchemaForm({ form, stateValues: emptied(form, 'opts.mode') });
    expect(parsed.ok).toBe(true);
    expect(asServerRuns(bare, (parsed as { value: unknown }).value)).toEqual({ service: 'api', opts: {} });
  });

  it('control: the same property at the top level, emptied, gets its own default (as its hint says)', () => {
    const top: JsonSchema = { type: 'object', properties: { service: { type: 'string' }, mode: { type: 'string', default: 'safe' } }, required: ['service'] };
    const form = buildSchemaForm({ schema: top, initialValue: { service: 'api' } });
    const parsed = parseSchemaForm({ form, stateValues: emptied(form, 'mode') });
    expect(asServerRuns(top, (parsed as { value: unknown }).value)).toEqual({ service: 'api', mode: 'safe' });
  });
});
