import { describe, expect, it } from 'vitest';
import { digestOf, planHistoryWrite } from './history-write-plan.js';

const known = (messages: string[], revision = 3) => ({ revision, digests: messages.map(digestOf) });

describe('planHistoryWrite', () => {
  it('appends only the new messages when the stored history is a prefix', () => {
    expect(planHistoryWrite(known(['a', 'b']), ['a', 'b', 'c', 'd'])).toEqual({ mode: 'patch', baseRevision: 3, baseLength: 2, dropFront: 0, set: [], append: ['c', 'd'] });
  });

  it('drops trimmed messages from the front without writing the rest again', () => {
    expect(planHistoryWrite(known(['a', 'b', 'c']), ['c', 'd'])).toEqual({ mode: 'patch', baseRevision: 3, baseLength: 3, dropFront: 2, set: [], append: ['d'] });
    expect(planHistoryWrite(known(['a', 'b']), [])).toEqual({ mode: 'patch', baseRevision: 3, baseLength: 2, dropFront: 2, set: [], append: [] });
  });

  it('replaces a message changed in place (a result added to the last tool message)', () => {
    expect(planHistoryWrite(known(['a', 'b']), ['a', 'b2', 'c'])).toEqual({ mode: 'patch', baseRevision: 3, baseLength: 2, dropFront: 0, set: [[1, 'b2']], append: ['c'] });
  });

  it('lines up a history whose messages repeat (the same question, the same answer) instead of rewriting it', () => {
    // Trimmed by one exchange, one message added: the first message it starts with is a later copy.
    expect(planHistoryWrite(known(['ask', 'same', 'ask', 'same']), ['ask', 'same', 'new'])).toEqual({ mode: 'patch', baseRevision: 3, baseLength: 4, dropFront: 2, set: [], append: ['new'] });
    expect(planHistoryWrite(known(['ask', 'same', 'ask', 'same', 'ask', 'same']), ['ask', 'same', 'ask', 'same', 'new'])).toEqual({ mode: 'patch', baseRevision: 3, baseLength: 6, dropFront: 2, set: [], append: ['new'] });
  });

  it('rewrites when nothing is known, or the histories do not line up', () => {
    expect(planHistoryWrite(undefined, ['a'])).toEqual({ mode: 'rewrite', append: ['a'] });
    expect(planHistoryWrite(known(['a', 'b']), ['x', 'y'])).toEqual({ mode: 'rewrite', append: ['x', 'y'] });
    expect(planHistoryWrite(known(['a', 'b', 'c']), ['a'])).toEqual({ mode: 'rewrite', append: ['a'] });
  });
});
