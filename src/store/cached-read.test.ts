import { describe, expect, it } from 'vitest';
import { cachedRead } from './cached-read.js';

describe('cachedRead', () => {
  it('keeps an answer for its max age, and not one that keep declines', async () => {
    let reads = 0;
    const kept = cachedRead(async () => (reads += 1), { keep: (answer) => answer !== 2 });
    expect(await kept.get(60_000)).toBe(1);
    expect(await kept.get(60_000)).toBe(1);
    kept.forget();
    // Declined: the callers that shared the read get it, the next caller reads again.
    const [first, second] = await Promise.all([kept.get(60_000), kept.get(60_000)]);
    expect([first, second]).toEqual([2, 2]);
    expect(await kept.get(60_000)).toBe(3);
    expect(await kept.get(60_000)).toBe(3);
    expect(reads).toBe(3);
  });
});
