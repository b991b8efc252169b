import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalUrl, urlSpellingProblem } from './canonical-url.js';

/** More runs for a soak: `PROPERTY_RUNS=20000 npx vitest run src/tools/http/canonical-url.test.ts`. */
const PROPERTY_RUNS = Number(process.env.PROPERTY_RUNS ?? 2000);

/**
 * Paths made of what escapes are made of: `%`, hex digits (which a decoded `%3x` can supply),
 * escapes of unreserved and reserved characters in either case, and the characters around them.
 */
const PIECE = fc.oneof(
  fc.constantFrom('%', '%%', '%2', '%25', '%3', '%37', '%33', '%73', '%7e', '%7E', '%2f', '%2F', '%41', '%61', '%c3%a9', '%2e', '%5f'),
  fc.constantFrom('0', '3', '7', 'a', 'F', 'e', 's', '/', '.', '-', '_', '~', '?', '#', '=', '&', ';', ' ', 'é'),
  fc.stringMatching(/^%[0-9a-fA-F]{2}$/),
);
const PATH = fc.array(PIECE, { maxLength: 12 }).map((pieces) => pieces.join(''));
const BASE = fc.constantFrom('http://127.0.0.1:8080/api/', 'https://API.example.com:443/v1/', 'http:api.example.com/', 'http://%61pi.example.com/');

describe('canonicalUrl', () => {
  it('is idempotent: the URL a policy rule checked is the URL execute sends', () => {
    fc.assert(
      fc.property(BASE, PATH, (base, path) => {
        const once = canonicalUrl(base + path);
        expect(canonicalUrl(once)).toBe(once);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('leaves no unreserved escape for a server to decode into another path once a URL passes the spelling check', () => {
    fc.assert(
      fc.property(BASE, PATH, (base, path) => {
        fc.pre(urlSpellingProblem(base + path) === undefined);
        expect(canonicalUrl(base + path)).not.toMatch(/%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('writes a "%" that starts no escape as %25, so decoding cannot complete an escape out of it', () => {
    expect(canonicalUrl('http://127.0.0.1:8080/api/%%37%33ecrets/prod')).toBe('http://127.0.0.1:8080/api/%2573ecrets/prod');
    expect(canonicalUrl('http://127.0.0.1:8080/api/100%?q=5%')).toBe('http://127.0.0.1:8080/api/100%25?q=5%25');
  });
});

describe('urlSpellingProblem', () => {
  it('refuses a "%" not followed by two hex digits, and accepts escapes', () => {
    for (const url of ['http://h/api/%%37%33ecrets', 'http://h/api/100%', 'http://h/a%zz', 'http://h/a?q=%4']) {
      expect(urlSpellingProblem(url), url).toBe('has a "%" that is not followed by two hex digits; write "%" itself as %25');
    }
    expect(urlSpellingProblem('http://h/api/100%25?q=%c3%a9')).toBeUndefined();
  });
});
