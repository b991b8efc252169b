import { unfinishedUrlAuthority, withoutUrlUserinfo } from './url-userinfo.js';

/**
 * Replaces known secret values wherever they appear in text the model, a card or a log could see:
 * an API that echoes request headers (httpbin, debug endpoints, error pages) must not hand the
 * token it was sent back to the model.
 */
export const REDACTED = '[redacted]';

/** Values shorter than this are not treated as secrets: redacting `1` or `on` would mangle output. */
const MIN_SECRET_LENGTH = 4;
/** Base64 of a secret inside longer encoded data is matched only on this many characters or more. */
const MIN_BASE64_CORE_LENGTH = 8;

export interface Redactor {
  /** `text` with every form of every secret replaced by `[redacted]`. */
  (text: string): string;
  /**
   * Redacts `text` and keeps only what comes before index `end`: a secret that starts before `end`
   * is replaced whole even if it runs past it. Redacting first and cutting after is what keeps a
   * cut from leaving the first half of a secret; the text must reach `lookaheadBytes` past `end`.
   */
  head(text: string, end: number): string;
  /** UTF-8 bytes of the longest form replaced: read this far past a cut so a secret across it is seen whole. */
  readonly lookaheadBytes: number;
}

/**
 * The forms of each secret that are replaced (for secrets of at least 4 characters):
 * - the value itself;
 * - as inside a JSON string (`"` and `\` escaped, control characters as `\n`, `\u0001`), also with
 *   `/` escaped as `\/` (PHP's default);
 * - URL-encoded, as `encodeURIComponent` and as a form field (`URLSearchParams`: space as `+`);
 * - base64 of its UTF-8 bytes, standard (with padding) and URL-safe (without), on its own; and the
 *   part of it that does not depend on neighbouring bytes when it is encoded inside a longer value
 *   (`user:secret` in a Basic header, a Kubernetes Secret's data), at each of the three alignments,
 *   when that part is at least 8 characters long.
 */
export function createRedactor(secrets: Iterable<string>): Redactor {
  const values = [...new Set([...secrets].filter((secret) => secret.length >= MIN_SECRET_LENGTH))];
  const variants = new Set<string>();
  for (const value of values) for (const form of secretForms(value)) variants.add(form);
  if (variants.size === 0) return Object.assign((text: string) => text, { head: (text: string, end: number) => text.slice(0, end), lookaheadBytes: 0 });
  // Longest first, so `Bearer abc123` is replaced whole before `abc123` alone.
  const sorted = [...variants].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
  const lookaheadBytes = Math.max(...sorted.map((variant) => Buffer.byteLength(variant, 'utf8')));
  const redact = (text: string) => text.replace(pattern, REDACTED);
  const head = (text: string, end: number) => {
    let kept = '';
    let from = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index >= end) break;
      kept += `${text.slice(from, match.index)}${REDACTED}`;
      from = match.index + match[0].length;
    }
    return from < end ? kept + text.slice(from, end) : kept;
  };
  return Object.assign(redact, { head, lookaheadBytes });
}

/**
 * `redactor`, also replacing the credentials of every URL in the text (`https://[redacted]@host/`),
 * for what quotes URLs that are not known secrets (a connect error naming the server's URL).
 *
 * Its `head` cannot read far enough past the cut to see a userinfo whole (`lookaheadBytes` covers only
 * the known secrets, and a password has no length): when the text reaches the cut and ends inside
 * the authority of a URL that starts before it, the caller may have cut the text before the `@`, so
 * the authority is replaced from its start (`postgres://[redacted]`) rather than leaving
 * `postgres://admin:` and the start of the password.
 */
export function redactingUrlCredentials(redactor: Redactor): Redactor {
  const withoutUrlCredentials = (text: string) => withoutUrlUserinfo(text, REDACTED);
  const head = (text: string, end: number) => {
    const redacted = withoutUrlCredentials(text);
    const authority = text.length >= end ? unfinishedUrlAuthority(redacted) : undefined;
    if (authority !== undefined && authority < end) return `${redactor.head(redacted, authority)}${REDACTED}`;
    return redactor.head(redacted, end);
  };
  return Object.assign((text: string) => redactor(withoutUrlCredentials(text)), { head, lookaheadBytes: redactor.lookaheadBytes });
}

function secretForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const forms = [value, json, json.replaceAll('/', '\\/'), encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2)];
  const bytes = Buffer.from(value, 'utf8');
  forms.push(bytes.toString('base64'), bytes.toString('base64url'));
  for (const offset of [0, 1, 2]) {
    // Encoded after `offset` other bytes (mod 3): the characters made only of the secret's bits.
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const core = encoded.slice(Math.ceil((offset * 8) / 6), Math.floor(((offset + bytes.length) * 8) / 6));
    if (core.length >= MIN_BASE64_CORE_LENGTH) forms.push(core, core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return forms;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
