import { describe, expect, it } from 'vitest';
import { fieldHint, fieldLabel, humanizeName } from './field-labels.js';

describe('humanizeName', () => {
  it('turns property names into words', () => {
    expect(['max_replicas', 'maxReplicas', 'max-replicas', 'dryRunURL', 'URL', 'timeout_seconds', 'a', '', '___'].map(humanizeName)).toEqual([
      'Max replicas',
      'Max replicas',
      'Max replicas',
      'Dry run URL',
      'URL',
      'Timeout seconds',
      'A',
      '(unnamed)',
      // Nothing but separators: the name itself says more than "(unnamed)".
      '___',
    ]);
  });
});

describe('fieldLabel and fieldHint', () => {
  it('use the title, a dotted path for nested fields, and never leave a label blank', () => {
    expect(fieldLabel({ path: ['replicas'], title: 'Pod count' })).toBe('Pod count');
    expect(fieldLabel({ path: ['resources', 'limits', 'cpu'] })).toBe('resources.limits.cpu');
    expect(fieldLabel({ path: ['x'], title: '   ' })).toBe('(unnamed)');
    expect(fieldLabel({ path: [] })).toBe('Value');
  });

  it('show the default after the description', () => {
    expect(fieldHint({ description: 'Target namespace', defaultValue: { value: 'staging' } })).toBe('Target namespace · Default: "staging"');
    expect(fieldHint({ defaultValue: { value: null } })).toBe('Default: null');
    expect(fieldHint({})).toBeUndefined();
  });
});
