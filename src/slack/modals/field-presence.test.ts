import { describe, expect, it } from 'vitest';
import { decodeActionId, encodeActionId, presencesAlong } from './field-presence.js';

describe('action ids', () => {
  it('carry the input variant and the presence of every level, and read back', () => {
    const actionId = encodeActionId({ variant: 'json', presences: ['set', 'absent', 'null'] });
    expect(actionId).toBe('j.san');
    expect(decodeActionId(actionId)).toEqual({ variant: 'json', presences: ['set', 'absent', 'null'] });
  });

  it('read foreign ids as a plain widget with a value', () => {
    expect(decodeActionId('value')).toEqual({ variant: 'widget', presences: [] });
    expect(decodeActionId('x.zz')).toEqual({ variant: 'widget', presences: ['set', 'set'] });
  });
});

describe('presencesAlong', () => {
  it('tells missing, null, empty and set apart at every level', () => {
    const value = { a: { b: null, c: '', d: [], e: 1 } };
    expect(['b', 'c', 'd', 'e', 'f'].map((name) => presencesAlong({ initialValue: value, path: ['a', name] }))).toEqual([
      ['set', 'null'],
      ['set', 'empty'],
      ['set', 'empty'],
      ['set', 'set'],
      ['set', 'absent'],
    ]);
    expect(presencesAlong({ initialValue: undefined, path: ['a', 'b'] })).toEqual(['fresh', 'fresh']);
    expect(presencesAlong({ initialValue: {}, path: ['a', 'b'] })).toEqual(['absent', 'absent']);
  });
});
