/**
 * Escaping for everything the page writes into HTML. All bot output is untrusted: every string
 * reaches the DOM through `escapeHtml`, and the only links made are http(s) ones.
 */

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text (or any value, as text) made safe for element content and quoted attributes. */
export function escapeHtml(value) {
  return String(value ?? '').replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]);
}

/** Slack escapes only these three in message text; `&amp;lt;` stays the literal text `&lt;`. */
export function decodeSlackEntities(text) {
  return String(text).replace(/&(amp|lt|gt);/g, (_, name) => ({ amp: '&', lt: '<', gt: '>' })[name]);
}

/** The URL when it is an absolute http(s) one, else undefined (no javascript:, data:, relative…). */
export function safeHttpUrl(url) {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** A link opening in a new tab; with an unsafe URL, just the label, marked inert. */
export function linkHtml(url, labelHtml) {
  const href = safeHttpUrl(url);
  if (href === undefined) return `<span class="bk-link-inert" title="Link not opened: only http(s) links are">${labelHtml}</span>`;
  return `<a class="bk-link" href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${labelHtml}</a>`;
}

/** What the renderer does not know, shown as formatted JSON rather than dropped. */
export function jsonFallbackHtml(value, what) {
  let json;
  try {
    json = JSON.stringify(value, null, 2);
  } catch {
    json = String(value);
  }
  const type = value && typeof value === 'object' && typeof value.type === 'string' ? ` "${value.type}"` : '';
  return `<div class="bk-unknown"><div class="bk-unknown-label">The sandbox does not render this ${escapeHtml(what)}${escapeHtml(type)}; as sent:</div><pre>${escapeHtml(json ?? 'undefined')}</pre></div>`;
}

export function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
