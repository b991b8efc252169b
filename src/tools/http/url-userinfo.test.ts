import { describe, expect, it } from 'vitest';
import { withoutUrlUserinfo } from './url-userinfo.js';

describe('withoutUrlUserinfo', () => {
  it.each([
    ['user and password', 'connect https://deploy:hunter2@mcp.internal:8443/mcp failed', 'connect https://…@mcp.internal:8443/mcp failed'],
    ['a user alone', 'http://token@host/', 'http://…@host/'],
    ['any scheme, any case', 'WSS://Tok3n@mcp.internal and redis://:hunter2@redis:6379/0', 'WSS://…@mcp.internal and redis://…@redis:6379/0'],
    ['an @ inside the password, up to the last @ of the authority', 'wss://u:p@ss@host?x=a@b', 'wss://…@host?x=a@b'],
    ['several URLs', 'https://a:b@one/ and HTTPS://c:d@two', 'https://…@one/ and HTTPS://…@two'],
    ['a URL after a long run of scheme characters', `${'a.'.repeat(100)}postgres://admin:pw@db/app`, `${'a.'.repeat(100)}postgres://…@db/app`],
    ['a long password', `at http://user:${'p'.repeat(300)}@host/v1`, 'at http://…@host/v1'],
  ])('replaces %s', (_, text, expected) => {
    expect(withoutUrlUserinfo(text, '…')).toBe(expected);
  });

  it('leaves URLs without credentials and addresses outside URLs alone', () => {
    const text = 'https://host/path?mail=a@b.c#x@y and ops@example.com at https://host:8443/ GET https://host/users/@me';
    expect(withoutUrlUserinfo(text, '…')).toBe(text);
  });

  it('takes the replacement as text, not as a replace pattern', () => {
    expect(withoutUrlUserinfo('https://u:p@host/', '$1$&')).toBe('https://$1$&@host/');
  });

  /**
   * Not a performance assertion: a guard against the quadratic pattern coming back. Any tool result
   * passes through this, so a run of scheme characters with a word boundary every few characters is
   * untrusted input. With the scheme unbounded, 400 KB of such a run took about a minute here (the
   * time grows with the square of the length); bounded, a few milliseconds. The 10 s limit is far
   * above the linear cost on any loaded machine and far below the quadratic one.
   */
  it.each([
    ['dots', 'a.'.repeat(200_000)],
    ['dashes', 'x-'.repeat(200_000)],
  ])('finishes on 400 KB of a run of scheme characters with boundaries (%s) in far less than the quadratic pattern took', (_, text) => {
    const started = performance.now();
    expect(withoutUrlUserinfo(`${text} https://u:p@host/`, '…')).toBe(`${text} https://…@host/`);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
