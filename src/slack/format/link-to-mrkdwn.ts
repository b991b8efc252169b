import { escapeMrkdwn } from './escape-mrkdwn.js';
import { neutralisePlainBroadcasts } from './neutralise-pings.js';

const LINKABLE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** `example.com`, `login.example.co.uk/path`: a dot followed by a letters-only last label. */
const LOOKS_LIKE_DOMAIN = /^[^\s/?#@]+\.\p{L}{2,}\.?(?::\d+)?(?:[/?#]\S*)?$/iu;
const LOOKS_LIKE_EMAIL = /^(?:mailto:)?[^\s@]+@[^\s@]+\.\p{L}{2,}$/iu;
const EDGE_PUNCTUATION = /^[\s"'([{<*_~`]+|[\s"')\]}>*_~`.,;:!?]+$/gu;

/**
 * A link from model output as Slack mrkdwn. The model's text is untrusted, so the label must not
 * hide where the link goes: a label that names some other address (`[https://bank.com](https://evil)`,
 * `[bank.com login](…)`) is shown as plain text with the real URL after it. Addresses Slack cannot
 * link (`javascript:`, relative paths) stay visible as text.
 */
export function linkToMrkdwn({ url, label }: { url: string; label: string }): string {
  const target = parseLinkTarget(url.trim());
  const cleanLabel = label.replace(/\*\*|__|~~|`/g, '').trim();
  const shownLabel = neutralisePlainBroadcasts(escapeMrkdwn(cleanLabel));
  if (target === undefined) {
    return neutralisePlainBroadcasts(escapeMrkdwn(cleanLabel === '' ? url : `${cleanLabel} (${url})`));
  }
  // `|` would end the URL early inside `<url|label>`; `&` must be escaped like everywhere else.
  const href = escapeMrkdwn(target.href.replaceAll('|', '%7C'));
  if (cleanLabel === '' || cleanLabel === url.trim()) return `<${href}>`;
  if (labelNamesAnotherAddress(cleanLabel, addressIdentity(target))) return `${shownLabel} (<${href}>)`;
  return `<${href}|${shownLabel}>`;
}

/**
 * Whether a markdown link may keep its label as the clickable text: only when the target is a
 * web or mail address and the label does not name some other address.
 */
export function linkLabelIsHonest({ url, label }: { url: string; label: string }): boolean {
  const target = parseLinkTarget(url.trim());
  return target !== undefined && !labelNamesAnotherAddress(label.replace(/\*\*|__|~~|`/g, '').trim(), addressIdentity(target));
}

function parseLinkTarget(url: string): URL | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return LINKABLE_PROTOCOLS.has(parsed.protocol) ? parsed : undefined;
}

function labelNamesAnotherAddress(label: string, targetIdentity: string): boolean {
  return label.split(/\s+/).some((word) => {
    const identity = wordAddressIdentity(word.replace(EDGE_PUNCTUATION, ''));
    return identity !== undefined && identity !== targetIdentity;
  });
}

/** The part of an address a reader trusts: the host for web links, the mailbox for email. */
function addressIdentity(url: URL): string {
  if (url.protocol === 'mailto:') return `mailto:${safelyDecode(url.pathname).toLowerCase()}`;
  return url.hostname.toLowerCase().replace(/^www\./, '').replace(/\.$/, '');
}

function wordAddressIdentity(word: string): string | undefined {
  if (LOOKS_LIKE_EMAIL.test(word)) return `mailto:${word.replace(/^mailto:/i, '').toLowerCase()}`;
  const candidate = HAS_SCHEME.test(word) ? word : LOOKS_LIKE_DOMAIN.test(word) ? `http://${word}` : undefined;
  if (candidate === undefined) return undefined;
  // Anything that looks like an address but does not parse still claims to be one.
  if (!URL.canParse(candidate)) return word.toLowerCase();
  const parsed = new URL(candidate);
  return parsed.protocol === 'mailto:' ? `mailto:${parsed.pathname.toLowerCase()}` : addressIdentity(parsed);
}

function safelyDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
