import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeApprovalActionValue, encodeApprovalActionValue } from './action-ids.js';

const idPart = fc.string({ unit: fc.constantFrom(...'abcXYZ019_-'), minLength: 1, maxLength: 200 });

describe('approval button values', () => {
  it('round-trips the step and approval a click decides', () => {
    const value = encodeApprovalActionValue({ stepId: '3f1c9a0e2b7d4c5e', approvalId: 'aitxt-Xy12_ab' });
    expect(value).toBe('3f1c9a0e2b7d4c5e:aitxt-Xy12_ab');
    expect(decodeApprovalActionValue(value)).toEqual({ stepId: '3f1c9a0e2b7d4c5e', approvalId: 'aitxt-Xy12_ab' });
  });

  it('round-trips any valid ids and always fits a button value', () => {
    fc.assert(
      fc.property(idPart, idPart, (stepId, approvalId) => {
        const value = encodeApprovalActionValue({ stepId, approvalId });
        expect(value.length).toBeLessThanOrEqual(2000);
        expect(decodeApprovalActionValue(value)).toEqual({ stepId, approvalId });
      }),
    );
  });

  it('refuses to encode ids a click could not be decoded back to', () => {
    expect(() => encodeApprovalActionValue({ stepId: 'step:1', approvalId: 'a' })).toThrow(RangeError);
    expect(() => encodeApprovalActionValue({ stepId: 's', approvalId: '' })).toThrow(RangeError);
    expect(() => encodeApprovalActionValue({ stepId: 's', approvalId: 'a'.repeat(201) })).toThrow(RangeError);
  });

  it.each([
    ['a number', 42],
    ['undefined', undefined],
    ['an object', { stepId: 's', approvalId: 'a' }],
    ['no separator', 'stepapproval'],
    ['an extra part', 's:a:b'],
    ['an empty part', 's:'],
    ['markup', 's:<!channel>'],
    ['whitespace', 's: a'],
    ['a unicode look-alike', 's:аpproval'],
    ['an over-long part', `s:${'a'.repeat(201)}`],
    ['a megabyte', `s:${'a'.repeat(1_000_000)}`],
  ])('rejects a forged value with %s', (_name, value) => {
    expect(decodeApprovalActionValue(value)).toBeUndefined();
  });
});
