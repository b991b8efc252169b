import { describe, expect, it } from 'vitest';
import { createJsonSchemaValidator, type JsonSchemaIssue } from '../../tools/json-schema-validator.js';
import { buildSchemaForm } from '../modals/schema-form.js';
import { inputBlockAt } from '../modals/view-state.test-support.js';
import { inputFieldsOf, issuesToFieldErrors } from './field-errors.js';

const fields = [
  { blockId: 'f:0', path: [], control: { kind: 'group' } },
  { blockId: 'f:1', path: ['namespace'], control: { kind: 'choice' } },
  { blockId: 'f:2', path: ['limits'], control: { kind: 'json' } },
];

describe('issuesToFieldErrors', () => {
  it('shows each problem under the field it is about', () => {
    expect(
      issuesToFieldErrors(
        [
          { path: ['namespace'], message: 'must be staging or prod' },
          { path: ['limits', 'cpu'], message: 'must be at most 4' },
        ],
        fields,
      ),
    ).toEqual({ 'f:1': 'must be staging or prod', 'f:2': 'cpu: must be at most 4' });
  });

  it('puts problems with no field of their own on the first input', () => {
    expect(issuesToFieldErrors([{ path: [], message: 'give either a or b' }], fields)).toEqual({ 'f:1': 'give either a or b' });
  });

  it('puts a problem about an object shown as several inputs on its first input, naming it', () => {
    const nested = [...fields, { blockId: 'f:3', path: ['window'], control: { kind: 'group' } }, { blockId: 'f:4', path: ['window', 'start'], control: { kind: 'text' } }];
    expect(issuesToFieldErrors([{ path: ['window'], message: 'must have property end' }], nested)).toEqual({ 'f:4': 'window: must have property end' });
    expect(issuesToFieldErrors([{ path: ['elsewhere', 0], message: 'must be a string' }], nested)).toEqual({ 'f:1': 'elsewhere, item 1: must be a string' });
  });

  it('puts on the "Other fields" JSON field only problems about the properties it holds, or about nothing on the form', () => {
    const withRest = [
      ...fields,
      { blockId: 'f:3', path: ['window'], control: { kind: 'group' } },
      { blockId: 'f:4', path: ['window', 'start'], control: { kind: 'text' } },
      { blockId: 'f:5', path: [], control: { kind: 'rest', properties: [{ name: 'label_7' }, { name: 'label_8' }] } },
    ];
    expect(
      issuesToFieldErrors(
        [
          { path: ['window'], message: 'must have property end' },
          { path: ['namespace'], message: 'must be staging or prod' },
          { path: ['label_8'], message: 'is required' },
          { path: ['label_7', 'name'], message: 'must be a string' },
          { path: ['elsewhere'], message: 'must not be there' },
          { path: [], message: 'give either a or b' },
        ],
        withRest,
      ),
    ).toEqual({
      'f:4': 'window: must have property end',
      'f:1': 'must be staging or prod; give either a or b',
      'f:5': 'label_8: is required; label_7.name: must be a string; elsewhere: must not be there',
    });
  });

  it('counts list items from one, as the form`s own messages do ("Item 3")', () => {
    const schema = {
      type: 'object' as const,
      properties: {
        hosts: { type: 'array' as const, items: { type: 'string' as const, not: { const: 'localhost' } } },
        limits: { type: 'array' as const, items: { type: 'object' as const, properties: { name: { type: 'string' as const } } } },
      },
    };
    const value = { hosts: ['db1', 'db2', 'localhost'], limits: [{ name: 'cpu' }, { name: 4 }] };
    const form = buildSchemaForm({ schema, initialValue: value });
    const validated = createJsonSchemaValidator().validate(schema, value);
    const errors = issuesToFieldErrors((validated as { success: false; issues: JsonSchemaIssue[] }).issues, inputFieldsOf(form));
    expect(errors).toEqual({ [inputBlockAt(form, 'hosts').block_id!]: 'Item 3: must NOT be valid', [inputBlockAt(form, 'limits').block_id!]: 'Item 2, name: must be string' });
  });
});
