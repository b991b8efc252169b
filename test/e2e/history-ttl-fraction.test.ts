import { describe, expect, it } from 'vitest';
import { nextTs, threadReplies, useHarnesses } from './harness.js';

/**
 * `history.ttlHours` accepts any positive number, and `ttlHours * 60 * 60 * 1000` is not a whole
 * number for many decimal hours (1.33 h → 4788000.000000001 ms; 584 of the two-decimal values up to
 * 20 h). Redis's PEXPIRE refuses a fractional TTL ("value is not an integer"), so every thread save
 * failed and no mention was ever answered: the TTL is rounded to whole milliseconds.
 */
const harness = useHarnesses();

describe('history.ttlHours: 1.33', () => {
  it('answers a mention', async () => {
    const h = await harness({ extraYaml: 'history:\n  ttlHours: 1.33\n' });
    h.openai.enqueue({ text: 'Hello there.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hi', ts: threadTs });
    await h.settled();
    expect(threadReplies(h, threadTs).map((message) => message.text)).toEqual(['Hello there.']);
  });
});
