import { describe, expect, it } from 'vitest';
import { shortError } from './short-error.js';

describe('shortError', () => {
  it.each([
    ['a Redis outage reads as one', new Error('Reached the max retries per request limit (which is 2). Refer to "maxRetriesPerRequest" option for details.'), 'the state store (Redis) is unreachable'],
    ['credentials are removed', new Error('invalid auth for xoxb-123-456-abc'), 'invalid auth for [redacted]'],
    ['only the first line', new Error('first\nsecond'), 'first'],
  ])('%s', (_name, error, expected) => {
    expect(shortError(error)).toBe(expected);
  });
});
