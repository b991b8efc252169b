import { describe, expect, it } from 'vitest';
import { createJsonSchemaValidator, type JsonSchemaIssue } from '../../tools/json-schema-validator.js';
import { buildSchemaForm, parseSchemaForm } from '../modals/schema-form.js';
import { inputBlockAt, stateFromInput } from '../modals/view-state.test-support.js';
import { inputFieldsOf, issuesToFieldErrors } from './field-errors.js';

/**
 * The same issue as field-errors.nested.test.ts (an object's own rule, `dependencies`), in a tool
 * with more parameters than one form holds: the form then ends with "Other fields (JSON)", a rest
 * field whose path is the empty path. issuesToFieldErrors takes the field whose path is the
 * longest prefix of the issue's path, and the empty path is a prefix of every path: the issue
 * about `window` goes under the JSON box of the other fields (which does not hold `window`, and
 * refuses it as an unknown field if the approver adds it there) instead of under window's inputs.
 */
describe('a server-side issue about a nested object, in a form with more fields than it holds', () => {
  it('is shown under that object`s inputs, not under "Other fields (JSON)"', () => {
    const many = Object.fromEntries(Array.from({ length: 120 }, (_, index) => [`label_${index}`, { type: 'string' }]));
    const schema = {
      type: 'object',
      properties: {
        service: { type: 'string' },
        window: { type: 'object', properties: { start: { type: 'string' }, end: { type: 'string' } }, dependencies: { start: ['end'] } },
        ...many,
      },
      required: ['service'],
    } as const;
    const original = { service: 'api', window: { start: '06:00', end: '07:00' } };
    const form = buildSchemaForm({ schema: schema as never, initialValue: original });
    const restBlock = inputBlockAt(form, '*').block_id!;
    const startBlock = inputBlockAt(form, 'window.start').block_id!;
    // The approver empties "window.end" only.
    const parsed = parseSchemaForm({ form, stateValues: stateFromInput(form, { service: 'api', window: { start: '06:00' } }) as never });
    expect(parsed).toEqual({ ok: true, value: { service: 'api', window: { start: '06:00' } } });
    const validated = createJsonSchemaValidator().validate(schema as never, (parsed as { value: unknown }).value);
    expect(validated.success).toBe(false);
    const errors = issuesToFieldErrors((validated as { success: false; issues: JsonSchemaIssue[] }).issues, inputFieldsOf(form));
    expect({ onWindowStart: errors[startBlock] !== undefined, onOtherFields: errors[restBlock] }).toEqual({ onWindowStart: true, onOtherFields: undefined });
  });
});
