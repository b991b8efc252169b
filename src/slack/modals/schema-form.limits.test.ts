import { describe, expect, it } from 'vitest';
import { findBlockKitViolations } from '../blocks/limits.js';
import type { JsonSchema } from './json-schema.js';
import { modalView } from './modal-view.js';
import { buildSchemaForm, parseSchemaForm, type SchemaForm } from './schema-form.js';
import { inputBlockAt, stateFromBlocks, stateFromInput } from './view-state.test-support.js';

function objectSchema(count: number, property: (index: number) => JsonSchema): JsonSchema {
  return { type: 'object', properties: Object.fromEntries(Array.from({ length: count }, (_, index) => [`field_${index}`, property(index)])), additionalProperties: false };
}

function viewBytes(form: SchemaForm): number {
  return Buffer.byteLength(JSON.stringify(modalView({ callbackId: 'edit', title: 'Edit', privateMetadata: 'ap_1', blocks: form.blocks })));
}

describe('a schema with more fields than a modal holds', () => {
  const schema = objectSchema(150, (index) => ({ type: index % 2 === 0 ? 'string' : 'integer' }));
  const value = Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`field_${index}`, index % 2 === 0 ? `v${index}` : index]));

  it('shows what fits and puts the rest in one JSON field, losing nothing', () => {
    const form = buildSchemaForm({ schema, initialValue: value });
    expect(form.blocks.length).toBeLessThanOrEqual(95);
    const rest = inputBlockAt(form, '*');
    expect(rest.label.text).toBe('Other fields (JSON)');
    expect(rest.hint?.text).toMatch(/^More fields than one form holds, edited here as one JSON object: field_93, field_94, /);
    expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value });
  });

  it('accepts edits in the JSON field and rejects unknown names there', () => {
    const form = buildSchemaForm({ schema, initialValue: value });
    const edited = { ...value, field_149: 1, field_0: 'first' };
    expect(parseSchemaForm({ form, stateValues: stateFromInput(form, edited) })).toEqual({ ok: true, value: edited });
    const rest = inputBlockAt(form, '*');
    const state = stateFromBlocks(form.blocks);
    state[rest.block_id!] = { [rest.element.action_id!]: { type: 'plain_text_input', value: '{"field_149": 1, "feild_148": 2}' } };
    expect(parseSchemaForm({ form, stateValues: state })).toEqual({ ok: false, errors: { [rest.block_id!]: 'Unknown field: feild_148' } });
  });

  it('keeps the rest unchanged when even that is too long to edit', () => {
    const many = objectSchema(400, () => ({ type: 'string' }));
    const original = Object.fromEntries(Array.from({ length: 400 }, (_, index) => [`field_${index}`, `value ${index}`]));
    const form = buildSchemaForm({ schema: many, initialValue: original });
    expect(form.blocks.at(-1)).toMatchObject({ type: 'context', elements: [{ text: expect.stringMatching(/^Other fields \(JSON\) is too long to edit here/) }] });
    const edited = { ...original, field_0: 'changed' };
    expect(parseSchemaForm({ form, stateValues: stateFromInput(form, edited) })).toEqual({ ok: true, value: edited });
  });

  it('turns a nested object that does not fit into one JSON field', () => {
    const wide = objectSchema(60, () => ({ type: 'string' }));
    const form = buildSchemaForm({ schema: { type: 'object', properties: { first: wide, second: wide } } });
    expect(form.fields.map((field) => [field.path.join('.'), field.control.kind]).filter(([, kind]) => kind !== 'text')).toEqual([
      ['', 'group'],
      ['first', 'group'],
      ['second', 'json'],
    ]);
  });
});

describe('menus', () => {
  it('of a hundred options each stay within the view size however many there are', () => {
    const options = Array.from({ length: 100 }, (_, index) => `${'option '.repeat(9)}${index}`);
    const form = buildSchemaForm({ schema: objectSchema(95, () => ({ type: 'string', enum: options })) });
    expect(findBlockKitViolations(form.blocks, { surface: 'modal' })).toEqual([]);
    expect(viewBytes(form)).toBeLessThan(250_000);
    expect(form.fields.some((field) => field.control.kind === 'rest')).toBe(true);
  });
});

describe('values', () => {
  it('that together exceed the view size are kept unchanged rather than cut', () => {
    const schema = objectSchema(90, () => ({ type: 'string' }));
    const value = Object.fromEntries(Array.from({ length: 90 }, (_, index) => [`field_${index}`, '中'.repeat(2900)]));
    const form = buildSchemaForm({ schema, initialValue: value });
    expect(viewBytes(form)).toBeLessThan(250_000);
    const kept = form.blocks.filter((block) => block.type === 'context');
    expect(kept.length).toBeGreaterThan(0);
    expect(kept[0]).toMatchObject({ elements: [{ text: expect.stringMatching(/does not fit in one Slack form; it is kept unchanged\.$/) }] });
    expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value });
  });

  it('never prefill a text input beyond its max_length', () => {
    const form = buildSchemaForm({ schema: objectSchema(1, () => ({ type: 'string', maxLength: 5 })), initialValue: { field_0: 'too long for it' } });
    expect(inputBlockAt(form, 'field_0').element).toMatchObject({ max_length: 15, initial_value: 'too long for it' });
    expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: false, errors: { 'f:0': 'Must be at most 5 characters' } });
  });
});
