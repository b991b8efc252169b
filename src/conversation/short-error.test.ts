import { describe, expect, it } from 'vitest';
import { shortError } from './short-error.js';

describe('shortError', () => {
  it.each([
    ['a Redis outage reads as one', new Error('Reached the max retries per request limit (which is 2). Refer to "maxRetriesPerRequest" option for details.'), 'the state store (Redis) is unreachable'],
    ['credentials are removed', new Error('invalid auth for xoxb-123-456-abc'), 'invalid auth for [redacted]'],
    ['only the first line', new Error('first\nsecond'), 'first'],
    // A provider's error can quote what it was sent or what it chose to say: shown, never linked or pinged.
    [
      'links and mentions stay text',
      new Error('upstream said: <https://evil.example/login|Your session expired> <@U0OPSLEAD1> <!here>'),
      'upstream said: &lt;https://evil.example/login|Your session expired&gt; &lt;@U0OPSLEAD1&gt; &lt;!here&gt;',
    ],
    ['a long message is cut', new Error('y'.repeat(500)), `${'y'.repeat(199)}…`],
  ])('%s', (_name, error, expected) => {
    expect(shortError(error)).toBe(expected);
  });
});
