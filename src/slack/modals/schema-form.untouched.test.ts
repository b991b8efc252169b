import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm } from './schema-form.js';
import { stateFromBlocks, stateFromInput } from './view-state.test-support.js';

/** The approver opens Edit and submits without touching anything; the value must come back as it was. */
function submittedUntouched(schema: JsonSchema, input: unknown): unknown {
  const form = buildSchemaForm({ schema, initialValue: input });
  const result = parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) });
  return result.ok ? result.value : result;
}

describe('values the approver did not touch', () => {
  it('an object holding only keys the schema does not list (shown as "kept unchanged") is kept', () => {
    const schema: JsonSchema = { type: 'object', properties: { pod: { type: 'string' }, metadata: { type: 'object', properties: { owner: { type: 'string' } } } } };
    expect(submittedUntouched(schema, { pod: 'api-1', metadata: { team: 'payments' } })).toEqual({ pod: 'api-1', metadata: { team: 'payments' } });
  });

  it('… also when the object may be null (it does not become null)', () => {
    const schema: JsonSchema = { type: 'object', properties: { metadata: { type: ['object', 'null'], properties: { owner: { type: 'string' } } } } };
    expect(submittedUntouched(schema, { metadata: { team: 'payments' } })).toEqual({ metadata: { team: 'payments' } });
  });

  it('an explicit null of a union with null (pydantic `int | str | None = "25%"`) stays null', () => {
    const schema: JsonSchema = { type: 'object', properties: { max_surge: { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }], default: '25%' } } };
    expect(submittedUntouched(schema, { max_surge: null })).toEqual({ max_surge: null });
  });

  it('an explicit null in a JSON field shows as `null` and stays null, whatever the schema says of null', () => {
    const schema: JsonSchema = { type: 'object', properties: { limits: {}, shape: { anyOf: [{ type: 'integer' }, { type: 'string' }] } } };
    const form = buildSchemaForm({ schema, initialValue: { limits: null, shape: null } });
    const texts = form.blocks.flatMap((block) => (block.type === 'input' ? [(block.element as { initial_value?: string }).initial_value] : []));
    expect(texts).toEqual(['null', 'null']);
    expect(submittedUntouched(schema, { limits: null, shape: null })).toEqual({ limits: null, shape: null });
  });

  it('an object with unlisted keys and a listed one the approver empties keeps the unlisted keys', () => {
    const schema: JsonSchema = { type: 'object', properties: { metadata: { type: 'object', properties: { owner: { type: 'string' } } } } };
    const form = buildSchemaForm({ schema, initialValue: { metadata: { owner: 'bob', team: 'payments' } } });
    const result = parseSchemaForm({ form, stateValues: stateFromInput(form, { metadata: {} }) });
    expect(result).toEqual({ ok: true, value: { metadata: { team: 'payments' } } });
  });

  it('… and when the approver empties that box it is null again, not left out for the server`s default', () => {
    const schema: JsonSchema = { type: 'object', properties: { max_surge: { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }], default: '25%' } } };
    const form = buildSchemaForm({ schema, initialValue: { max_surge: null } });
    const stateValues = stateFromBlocks(form.blocks);
    for (const actions of Object.values(stateValues)) for (const state of Object.values(actions)) state.value = null;
    expect(parseSchemaForm({ form, stateValues })).toEqual({ ok: true, value: { max_surge: null } });
  });

  it('an explicit null of an enum that lists null stays null', () => {
    const schema: JsonSchema = { type: 'object', properties: { mode: { enum: ['fast', 'safe', null], default: 'safe' } } };
    expect(submittedUntouched(schema, { mode: null })).toEqual({ mode: null });
  });
});
