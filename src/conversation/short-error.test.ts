import { describe, expect, it } from 'vitest';
import { shortError } from './short-error.js';

describe('shortError', () => {
  it.each([
    ['a Redis outage reads as one', new Error('Reached the max retries per request limit (which is 2). Refer to "maxRetriesPerRequest" option for details.'), 'the state store (Redis) is unreachable'],
    ['credentials are removed', new Error('invalid auth for xoxb-123-456-abc'), 'invalid auth for [redacted]'],
    ['only the first line', new Error('first\nsecond'), 'first'],
    // Node's fetch quotes a URL it refuses whole: a proxy's password in OPENAI_BASE_URL, or an MCP server's.
    [
      'a URL\'s user and password are removed',
      new TypeError('Request cannot be constructed from a URL that includes credentials: http://countersign:Pr0xyPassw0rd@127.0.0.1:9/v1/chat/completions'),
      'Request cannot be constructed from a URL that includes credentials: http://…@127.0.0.1:9/v1/chat/completions',
    ],
    ['a user alone, any scheme, any case', new Error('connect failed: WSS://Tok3n@mcp.internal and redis://:hunter2@redis:6379/0'), 'connect failed: WSS://…@mcp.internal and redis://…@redis:6379/0'],
    ['an @ in the password', new Error('refused https://u:p@ss@w0rd@host/x?a=b@c'), 'refused https://…@host/x?a=b@c'],
    ['an @ after the host stays', new Error('GET https://host/users/@me failed; mail ops@example.com'), 'GET https://host/users/@me failed; mail ops@example.com'],
    // A provider's error can quote what it was sent or what it chose to say: shown, never linked or pinged.
    [
      'links and mentions stay text',
      new Error('upstream said: <https://evil.example/login|Your session expired> <@U0OPSLEAD1> <!here>'),
      'upstream said: &lt;https://evil.example/login|Your session expired&gt; &lt;@U0OPSLEAD1&gt; &lt;!here&gt;',
    ],
    ['a long message is cut', new Error('y'.repeat(500)), `${'y'.repeat(199)}…`],
    // Redacted before the cut: the start of a long password is not left without its `@`.
    ['a long password is removed before the cut', new Error(`at http://user:${'p'.repeat(300)}@host/v1`), 'at http://…@host/v1'],
  ])('%s', (_name, error, expected) => {
    expect(shortError(error)).toBe(expected);
  });
});
