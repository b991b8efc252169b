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
});
