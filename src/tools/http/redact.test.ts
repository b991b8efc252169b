import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, redactingUrlCredentials } from './redact.js';

const SECRET = 'sk/live+4f9a=Q7 z!~(x)';

describe('createRedactor', () => {
  const redact = createRedactor([SECRET]);

  it.each([
    ['the value itself', SECRET],
    ['inside a JSON string', JSON.stringify(SECRET).slice(1, -1)],
    ['inside a JSON string with escaped slashes', JSON.stringify(SECRET).slice(1, -1).replaceAll('/', '\\/')],
    ['URL-encoded (encodeURIComponent)', encodeURIComponent(SECRET)],
    ['form-encoded (space as +)', new URLSearchParams({ t: SECRET }).toString().slice(2)],
    ['base64', Buffer.from(SECRET).toString('base64')],
    ['base64url', Buffer.from(SECRET).toString('base64url')],
  ])('replaces the secret %s', (_, form) => {
    expect(redact(`before ${form} after`)).toBe(`before ${REDACTED} after`);
  });

  it('finds base64 of the secret inside a longer encoded value, at every alignment and in both alphabets', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:', 'deploy-bot:']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}${SECRET}\n`).toString(encoding);
        const redacted = redact(encoded);
        expect(redacted, `${encoding} after ${JSON.stringify(prefix)}`).toContain(REDACTED);
        // At most the few characters that mix the secret's bits with its neighbours' are left.
        expect(redacted.length, `${encoding} after ${JSON.stringify(prefix)}`).toBeLessThanOrEqual(encoded.length - Buffer.byteLength(SECRET) + 4 + REDACTED.length);
      }
    }
  });

  it('ignores values too short to be secrets, and redacts nothing without secrets', () => {
    expect(createRedactor(['on', 'abc'])('on abc')).toBe('on abc');
    expect(createRedactor([])('anything')).toBe('anything');
    expect(createRedactor([]).head('anything', 3)).toBe('any');
  });

  it('head() redacts first and cuts after: a secret that starts before the cut is replaced whole', () => {
    const text = `0123${SECRET}4567${SECRET}89`;
    expect(redact.head(text, text.length)).toBe(redact(text));
    expect(redact.head(text, 4)).toBe('0123');
    for (let end = 5; end <= 4 + SECRET.length; end += 1) expect(redact.head(text, end)).toBe(`0123${REDACTED}`);
    expect(redact.head(text, 4 + SECRET.length + 2)).toBe(`0123${REDACTED}45`);
    expect(redact.lookaheadBytes).toBeGreaterThanOrEqual(Buffer.from(SECRET).toString('base64').length);
  });
});

describe('redactingUrlCredentials', () => {
  it('replaces the userinfo of every URL too, before a cut', () => {
    const redact = redactingUrlCredentials(createRedactor([SECRET]));
    expect(redact(`https://u:pw@h/ ${SECRET}`)).toBe(`https://${REDACTED}@h/ ${REDACTED}`);
    expect(redact.head('https://user:password@h/path', 12)).toBe(`https://${REDACTED}`.slice(0, 12));
  });

  // A caller reads only `lookaheadBytes` past the cut (0 without secrets): the `@` may not be in the text.
  it.each([
    ['a password cut before its @', 'connect postgres://admin:S3cretPa', 30, `connect postgres://${REDACTED}`],
    ['a password with an @, cut before its last one', 'at https://u:p@ssw', 18, `at https://${REDACTED}`],
    ['a user cut at the end of the text', 'at https://deploy', 17, `at https://${REDACTED}`],
  ])('replaces a URL authority that runs to the end of the text from before the cut: %s', (_, text, end, expected) => {
    expect(redactingUrlCredentials(createRedactor([])).head(text, end)).toBe(expected);
  });

  it('keeps an authority the text shows the end of, and text that the cut does not reach', () => {
    const redact = redactingUrlCredentials(createRedactor([]));
    expect(redact.head('see https://host:8443/path and more', 20)).toBe('see https://host:844');
    expect(redact.head('see https://host:8443', 40)).toBe('see https://host:8443');
  });
});
