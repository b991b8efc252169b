import { describe, expect, it } from 'vitest';
import type { CleanCut } from './clean-cuts.js';
import { nextRollover } from './rollover.js';

const cutsAt = (...offsets: number[]): CleanCut[] => offsets.map((at) => ({ at, closing: '', reopening: '', resume: at }));
const base = { used: 0, streaming: true, from: 0, softLength: 50, maxLength: 100 };

describe('nextRollover', () => {
  it('sends everything while the message stays under the soft limit, without asking for cuts', () => {
    expect(nextRollover({ ...base, used: 20, end: 30, cuts: () => expect.unreachable() })).toEqual({});
  });

  it('ends the message at the first clean cut past the soft limit', () => {
    expect(nextRollover({ ...base, used: 40, from: 100, end: 180, cuts: () => cutsAt(105, 115, 130) })).toEqual({ cut: cutsAt(115)[0] });
    // A message already past it ends before the text not yet sent, if that is a clean cut.
    expect(nextRollover({ ...base, used: 60, from: 100, end: 120, cuts: () => cutsAt(100) })).toEqual({ cut: cutsAt(100)[0] });
  });

  it('counts the fence closing a code block in the message’s length', () => {
    const cut = { at: 95, closing: '```', reopening: '```\n', resume: 95 };
    expect(nextRollover({ ...base, end: 200, cuts: () => [cut] })).toEqual({ cut });
    expect(nextRollover({ ...base, end: 200, cuts: () => [{ ...cut, at: 98 }] })).toBeUndefined();
  });

  it('else ends the message at the last clean cut before the soft limit, the block crossing it starting the next', () => {
    expect(nextRollover({ ...base, end: 90, cuts: () => cutsAt(20) })).toEqual({ cut: cutsAt(20)[0] });
    expect(nextRollover({ ...base, end: 150, cuts: () => cutsAt(20, 30, 140) })).toEqual({ cut: cutsAt(30)[0] });
    // A message past the soft limit whose text goes on (no cut in it) takes it while it fits.
    expect(nextRollover({ ...base, used: 60, from: 100, end: 130, cuts: () => [] })).toEqual({});
  });

  it('finds none when the text up to the next clean cut fits no message', () => {
    expect(nextRollover({ ...base, end: 150, cuts: () => cutsAt(120) })).toBeUndefined();
    // A message not started yet takes some text: a cut where it would start is none.
    expect(nextRollover({ ...base, streaming: false, used: 4, from: 10, end: 150, cuts: () => cutsAt(10) })).toBeUndefined();
  });
});
