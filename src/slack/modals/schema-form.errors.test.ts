import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm, type SchemaForm } from './schema-form.js';
import { inputBlockAt, stateFromInput, type StateValues } from './view-state.test-support.js';

/** Errors from submitting `input` into a fresh form for one property `x`, keyed by dotted path. */
function errorsFor(property: JsonSchema, input: unknown, { required = true } = {}): string | undefined {
  const form = buildSchemaForm({ schema: { type: 'object', properties: { x: property }, required: required ? ['x'] : [] } });
  return errorOn(form, 'x', stateFromInput(form, input));
}

function errorOn(form: SchemaForm, dottedPath: string, stateValues: StateValues): string | undefined {
  const parsed = parseSchemaForm({ form, stateValues });
  if (parsed.ok) return undefined;
  const blockId = inputBlockAt(form, dottedPath).block_id!;
  expect(Object.keys(parsed.errors)).toEqual([blockId]);
  return parsed.errors[blockId];
}

/** A plain text input for `x` holding `text`, as Slack would send it. */
function typed(form: SchemaForm, text: string, dottedPath = 'x'): StateValues {
  const block = inputBlockAt(form, dottedPath);
  return { [block.block_id!]: { [block.element.action_id!]: { type: block.element.type, value: text } } };
}

describe('parseSchemaForm reports, on the input concerned,', () => {
  it('a missing required value', () => {
    expect(errorsFor({ type: 'integer' }, {})).toBe('Required');
    expect(errorsFor({ type: 'string', format: 'email' }, {})).toBe('Required');
    expect(errorsFor({ type: 'string', minLength: 1 }, {})).toBe('Required');
    expect(errorsFor({ type: 'string', enum: ['a', 'b'] }, {})).toBe('Required');
    expect(errorsFor({ type: 'integer' }, {}, { required: false })).toBeUndefined();
  });

  it('JSON that does not parse', () => {
    const form = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'object' } } } });
    expect(errorOn(form, 'x', typed(form, '{"annotate": tru'))).toMatch(/^Not valid JSON: /);
  });

  it('numbers out of range, not whole, or not multiples', () => {
    expect(errorsFor({ type: 'integer', minimum: 0, maximum: 50 }, { x: 80 })).toBe('Must be at most 50');
    expect(errorsFor({ type: 'integer', minimum: 0 }, { x: -1 })).toBe('Must be at least 0');
    expect(errorsFor({ type: 'number', exclusiveMinimum: 0 }, { x: 0 })).toBe('Must be greater than 0');
    expect(errorsFor({ type: 'number', exclusiveMaximum: 1 }, { x: 1 })).toBe('Must be less than 1');
    expect(errorsFor({ type: 'number', multipleOf: 0.5 }, { x: 1.25 })).toBe('Must be a multiple of 0.5');
    expect(errorsFor({ type: 'number', multipleOf: 0.1 }, { x: 0.3 })).toBeUndefined();
    expect(errorsFor({ type: 'integer' }, { x: 2.5 })).toBe('Must be a whole number');
  });

  it('text that is not a number', () => {
    const form = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'number' } } } });
    expect(errorOn(form, 'x', typed(form, '12 pods'))).toBe('Must be a number');
  });

  it('a number that would be recorded as another number (past 2^53, or more digits than a double holds)', () => {
    const form = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'integer' } } } });
    expect(errorOn(form, 'x', typed(form, '1234567890123456789'))).toBe('Too many digits to keep exactly: 1234567890123456789 would be sent as 1234567890123456800');
    expect(errorOn(form, 'x', typed(form, '9007199254740993'))).toBe('Too many digits to keep exactly: 9007199254740993 would be sent as 9007199254740992');
    const decimal = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'number' } } } });
    expect(errorOn(decimal, 'x', typed(decimal, '0.10000000000000000001'))).toMatch(/^Too many digits to keep exactly: /);
    expect(errorOn(decimal, 'x', typed(decimal, '1e-400'))).toMatch(/^Too many digits to keep exactly: /);
    // 2^60 is a double, but JSON writes it 1152921504606847000: typed exactly, it would be sent otherwise.
    expect(errorOn(form, 'x', typed(form, '1152921504606846976'))).toBe('Too many digits to keep exactly: 1152921504606846976 would be sent as 1152921504606847000');
    // Other spellings of the number recorded are that number, and so is the spelling JSON gives it (what the form prefills).
    for (const [text, value] of [['9007199254740992', 2 ** 53], [' 0.10 ', 0.1], ['1e3', 1000], ['-0', -0], ['1152921504606847000', 2 ** 60]] as const) {
      expect(parseSchemaForm({ form: decimal, stateValues: typed(decimal, text) })).toEqual({ ok: true, value: { x: value } });
    }
  });

  it('a number in a list or in JSON that would be recorded as another number', () => {
    const list = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'array', items: { type: 'integer' } } } } });
    expect(errorOn(list, 'x', typed(list, '80\n1234567890123456789'))).toBe('Line 2: too many digits to keep exactly: 1234567890123456789 would be sent as 1234567890123456800');
    const json = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'object' } } } });
    expect(errorOn(json, 'x', typed(json, '{"ids": [1, 1234567890123456789]}'))).toBe('Too many digits to keep exactly: 1234567890123456789 would be sent as 1234567890123456800');
    expect(parseSchemaForm({ form: json, stateValues: typed(json, '{"ids": [1.50, 2e3, "1234567890123456789"]}') })).toEqual({ ok: true, value: { x: { ids: [1.5, 2000, '1234567890123456789'] } } });
  });

  it('a value outside an enum too large for a menu', () => {
    const options = Array.from({ length: 120 }, (_, index) => `service-${index}`);
    const form = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'string', enum: options } } } });
    expect(errorOn(form, 'x', typed(form, 'service-999'))).toMatch(/^Must be one of: service-0, service-1, /);
    expect(parseSchemaForm({ form, stateValues: typed(form, ' service-42 ') })).toEqual({ ok: true, value: { x: 'service-42' } });
  });

  it('text that does not match the pattern, and ignores patterns that do not compile', () => {
    expect(errorsFor({ type: 'string', pattern: '^[a-z-]+$' }, { x: 'Payments API' })).toBe('Must match ^[a-z-]+$');
    expect(errorsFor({ type: 'string', pattern: '(?<=unclosed' }, { x: 'anything' })).toBeUndefined();
    expect(errorsFor({ type: 'string', pattern: '\\p{Lu}' }, { x: 'É' })).toBeUndefined();
  });

  it('text of the wrong length or format', () => {
    expect(errorsFor({ type: 'string', minLength: 3 }, { x: 'ab' })).toBe('Must be at least 3 characters');
    expect(errorsFor({ type: 'string', maxLength: 3 }, { x: 'abcd' })).toBe('Must be at most 3 characters');
    // Characters, not UTF-16 units: two emoji are two characters.
    expect(errorsFor({ type: 'string', maxLength: 2 }, { x: '🚀🚀' })).toBeUndefined();
    const email = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'string', format: 'email' } } }, initialValue: { x: 'nope' } });
    expect(errorOn(email, 'x', typed(email, 'still nope'))).toBe('Must be an email address');
    const url = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'string', format: 'uri' } } }, initialValue: { x: 'nope' } });
    expect(errorOn(url, 'x', typed(url, 'runbooks/payments'))).toBe('Must be a URL, e.g. https://example.com');
  });

  it('too few or too many items', () => {
    expect(errorsFor({ type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 1 }, { x: [] })).toBe('Choose at least one');
    expect(errorsFor({ type: 'array', items: { enum: ['a', 'b', 'c'] }, maxItems: 2 }, { x: ['a', 'b', 'c'] })).toBe('At most 2 items');
    expect(errorsFor({ type: 'array', items: { type: 'string' }, minItems: 2 }, { x: ['only'] })).toBe('Needs at least 2 items');
  });

  it('a list line that is not a number', () => {
    const form = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'array', items: { type: 'integer' } } } } });
    expect(errorOn(form, 'x', typed(form, '80\nhttps\n443'))).toBe('Line 2: must be a number');
    expect(errorOn(form, 'x', typed(form, '80\n\n443.5'))).toBe('Item 2: must be a whole number');
    expect(parseSchemaForm({ form, stateValues: typed(form, ' 80 \n\n 443\n') })).toEqual({ ok: true, value: { x: [80, 443] } });
  });

  it('a JSON value of the wrong type', () => {
    const form = buildSchemaForm({ schema: { type: 'object', properties: { x: { type: 'boolean' } } }, initialValue: { x: 'yes' } });
    expect(errorOn(form, 'x', typed(form, '"yes"'))).toBe('Must be true or false');
    expect(parseSchemaForm({ form, stateValues: typed(form, 'true') })).toEqual({ ok: true, value: { x: true } });
  });

  it('only input blocks, with every problem at once', () => {
    const schema = z.toJSONSchema(z.object({ name: z.string().regex(/^[a-z]+$/), replicas: z.int().max(5), extra: z.record(z.string(), z.string()) }), {
      target: 'draft-7',
      io: 'input',
    });
    const form = buildSchemaForm({ schema: schema as JsonSchema, initialValue: { name: 'ok', replicas: 1, extra: {} } });
    const stateValues = { ...typed(form, 'Not OK', 'name'), ...typed(form, '{', 'extra') };
    const replicas = inputBlockAt(form, 'replicas');
    stateValues[replicas.block_id!] = { [replicas.element.action_id!]: { type: 'number_input', value: '9' } };
    const parsed = parseSchemaForm({ form, stateValues });
    expect(parsed.ok).toBe(false);
    expect(Object.keys(parsed.ok ? {} : parsed.errors).sort()).toEqual([...form.inputBlockIds].sort());
  });
});
