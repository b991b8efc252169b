/**
 * Replaces known secret values wherever they appear in text the model, a card or a log could see:
 * an API that echoes request headers (httpbin, debug endpoints, error pages) must not hand the
 * token it was sent back to the model.
 */
export const REDACTED = '[redacted]';

/** Values shorter than this are not treated as secrets: redacting `1` or `on` would mangle output. */
const MIN_SECRET_LENGTH = 4;

export type Redactor = (text: string) => string;

export function createRedactor(secrets: Iterable<string>): Redactor {
  // Longest first, so `Bearer abc123` is replaced whole before `abc123` alone.
  const values = [...new Set([...secrets].filter((secret) => secret.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  const variants = new Set<string>();
  for (const value of values) {
    variants.add(value);
    // Also as it would appear inside a JSON string or a URL query.
    variants.add(JSON.stringify(value).slice(1, -1));
    variants.add(encodeURIComponent(value));
  }
  const pattern = new RegExp([...variants].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g');
  return (text) => text.replace(pattern, REDACTED);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
