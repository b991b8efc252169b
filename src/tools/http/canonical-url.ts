/**
 * One spelling per request URL. Policy rules match `url` as text, so the text they see, the card
 * shows, the approval binds and the request uses must be the same: otherwise
 * `/api/public/../secrets/x`, `HTTP://…` or `/api/%73ecrets/x` reach `/api/secrets/x` without
 * matching a rule written for it.
 *
 * Spellings that only differ cosmetically are rewritten (`canonicalUrl`): scheme and host case,
 * default port, `http:host` without slashes, escapes of unreserved characters (`%73` is `s` to
 * every server), lowercase escape digits, the fragment (never sent). Spellings that change which
 * path a server sees are refused instead (`urlSpellingProblem`), with a message the model can act
 * on: rewriting them silently would put a different path on the card than the model asked for,
 * and some (`..;`, `//`, `;`) are read differently by different servers, so no rewrite is right
 * for all of them.
 */

/** RFC 3986 unreserved characters: escaping them changes nothing for a server, so they are decoded. */
const ESCAPED_UNRESERVED = /%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/g;
const ESCAPE = /%[0-9a-fA-F]{2}/g;
/** A `%` that starts no escape: left alone, decoding a later escape could complete one (`%%37%33` is `%73`). */
const STRAY_PERCENT = /%(?![0-9a-fA-F]{2})/g;
// The URL parser deletes tab and newlines anywhere and trims other controls, so what is sent is not what was written.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
/** `scheme:` and, when present, `//authority`: what comes after them up to `?` or `#` is the path. */
const SCHEME_AND_AUTHORITY = /^[a-zA-Z][a-zA-Z0-9+.-]*:(\/\/[^/?#]*)?/;

/** Why `text` is refused as a request URL, or undefined when its spelling is acceptable. */
export function urlSpellingProblem(text: string): string | undefined {
  if (CONTROL_CHARACTER.test(text)) return 'contains a control character (tab, newline…), which the URL parser drops; write the URL without it';
  if (text.includes('\\')) return 'contains a backslash, which is read as "/"; write "/" instead';
  // Servers differ on a lone `%` (kept, dropped, or decoded with what follows once escapes are decoded).
  if (text.search(STRAY_PERCENT) !== -1) return 'has a "%" that is not followed by two hex digits; write "%" itself as %25';
  // The parser trims leading and trailing spaces too; they change nothing, so they are not refused.
  const decoded = decodeUnreserved(text.replace(/^ +| +$/g, ''));
  const path = decoded.replace(SCHEME_AND_AUTHORITY, '').split(/[?#]/, 1)[0] ?? '';
  const segments = path.split('/');
  // Tomcat and others read `..;x` as `..`: a segment is a dot segment whatever follows a `;`.
  if (segments.some((segment) => ['.', '..'].includes(segment.split(';', 1)[0] ?? ''))) {
    const resolved = URL.parse(decoded);
    return `has "." or ".." path segments; write the path they lead to${resolved && !resolved.pathname.includes(';') ? ` (${withoutFragment(resolved)})` : ''}`;
  }
  if (path.includes(';')) return 'has ";" in its path, which some servers cut off with what follows it; leave it out or escape it as %3B';
  // Leading empty segment is the `/` that starts the path; a trailing one is a trailing `/`.
  if (segments.slice(1, -1).includes('')) return 'has an empty path segment ("//"), which some servers merge into one "/"; write a single "/"';
  return undefined;
}

/**
 * The one spelling of `text` that is requested, shown and matched by policy: a `%` that starts no
 * escape written as `%25`, unreserved escapes decoded, the rest of the escapes in uppercase, parsed
 * as browsers and `fetch` parse it (WHATWG), without the fragment. Idempotent, so a URL checked
 * once is the URL sent; text that does not parse is returned as it is (the schema refuses it anyway).
 */
export function canonicalUrl(text: string): string {
  // With every `%` starting an escape, one decoding pass cannot make a new escape.
  const url = URL.parse(decodeUnreserved(text.replace(STRAY_PERCENT, '%25')));
  if (!url) return text;
  return withoutFragment(url).replace(ESCAPE, (sequence) => sequence.toUpperCase());
}

function decodeUnreserved(text: string): string {
  return text.replace(ESCAPED_UNRESERVED, (_sequence, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

function withoutFragment(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = '';
  return copy.href;
}
