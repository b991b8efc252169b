import { describe, expect, it } from 'vitest';
import { describeChanges, diffInputs } from './input-diff.js';

describe('diffInputs', () => {
  it('names each changed, added and removed field by its dotted path', () => {
    const changes = diffInputs(
      { service: 'worker', namespace: 'prod', limits: { cpu: 1, memory: '1Gi' }, tags: ['a'] },
      { service: 'worker', namespace: 'staging', limits: { cpu: 2 }, tags: ['a', 'b'], force: true },
    );
    expect(describeChanges(changes)).toEqual([
      'namespace: "prod" → "staging"',
      'limits.cpu: 1 → 2',
      'limits.memory: "1Gi" → (removed)',
      'tags: ["a"] → ["a","b"]',
      'force: (added) → true',
    ]);
  });

  it('finds nothing when the edit changed nothing', () => {
    expect(diffInputs({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
  });
});
