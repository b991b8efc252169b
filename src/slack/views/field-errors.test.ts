import { describe, expect, it } from 'vitest';
import { issuesToFieldErrors } from './field-errors.js';

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
    expect(issuesToFieldErrors([{ path: ['elsewhere', 0], message: 'must be a string' }], nested)).toEqual({ 'f:1': 'elsewhere.0: must be a string' });
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
});
