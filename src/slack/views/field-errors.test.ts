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
});
