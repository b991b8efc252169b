/**
 * The bot's rule for a link whose label names another address (src/slack/format/link-label.ts),
 * for the page: the page is plain JavaScript served as-is and cannot import the bot's TypeScript,
 * so the rule is written again here; page-tests/link-label.test.ts holds both to the same answers.
 * The bot never sends such a link (it shows the label, then the real target); when the page is
 * given one anyway (code it took for text, a bot bug), it shows it the bot's way, marked, rather
 * than as a link disguised as another address.
 */
import { escapeHtml, linkHtml } from './escape.js';

const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const LOOKS_LIKE_EMAIL = /^(?:mailto:)?[^\s@]+@[^\s@]+\.\p{L}{2,}$/iu;
const EDGE_PUNCTUATION = /^["'([{<*_~`]+|["')\]}>*_~`.,;:!?]+$/g;
/** Dot-separated labels ending in a letters-only one (or four numbers), anywhere in a word. */
const LOOKS_LIKE_HOST = /(?<![\p{L}\p{N}\p{M}_.-])(?:(?:[\p{L}\p{N}\p{M}_-]+\.)+\p{L}[\p{L}\p{M}]+|(?:\d{1,3}\.){3}\d{1,3})(?![\p{L}\p{N}\p{M}_-])/gu;
/** A host-like run after one `/`, `?`, `#`, `=` or `&` is a file or a parameter, not where a link goes. */
const IN_PATH_OR_QUERY = /(?:^|[^/])\/$|[?#=&]$/;
/** Characters a reader does not see: a label with any could hide an address, so it is not trusted. */
const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cs}\p{Co}\p{Cn}\u2800]|(?![\t\n\v\f\r])\p{Cc}/u;
/** An emoji (its joiners and variation selectors included): the one place hidden characters are ordinary. */
const EMOJI = /\p{RGI_Emoji}/gv;
const IDEOGRAPHIC_FULL_STOPS = /[\u3002\uFF0E\uFF61]/g;
const WORD_BREAK = /[^!-~\p{L}\p{N}\p{M}]+/u;

/**
 * Whether `label`, as a reader sees it, names an address other than `url`'s host (or mailbox), or
 * hides characters that could disguise one. Markdown's emphasis marks and backticks are not seen.
 */
export function labelNamesAnotherAddress(label, url) {
  let target;
  try {
    target = new URL(String(url).trim());
  } catch {
    return false;
  }
  const visible = String(label).replace(/\*\*|__|~~|`/g, '').trim().replace(EMOJI, ' ');
  if (HIDDEN.test(visible)) return true;
  const targetIdentity = addressIdentity(target);
  return visible
    .normalize('NFKC')
    .replace(IDEOGRAPHIC_FULL_STOPS, '.')
    .split(WORD_BREAK)
    .some((word) => claimedIdentities(word.replace(EDGE_PUNCTUATION, '')).some((identity) => identity !== targetIdentity));
}

/**
 * A link with `label` (plain text) as what is clicked; when the label names another address, the
 * label as text and then the real target as the link, as the bot writes it for Slack.
 */
export function labelledLinkHtml(url, label, labelHtml = escapeHtml(label)) {
  if (!labelNamesAnotherAddress(label, url)) return linkHtml(url, labelHtml);
  const shown = `${labelHtml} (${linkHtml(url, escapeHtml(url))})`;
  return `<span class="mk-link-disguised" title="The label names another address: the sandbox shows the real target, as the bot does">${shown}</span>`;
}

function addressIdentity(url) {
  if (url.protocol === 'mailto:') return `mailto:${safelyDecode(url.pathname).toLowerCase()}`;
  return url.hostname.toLowerCase().replace(/^www\./, '').replace(/\.$/, '');
}

function claimedIdentities(word) {
  if (LOOKS_LIKE_EMAIL.test(word)) return [`mailto:${word.replace(/^mailto:/i, '').toLowerCase()}`];
  if (HAS_SCHEME.test(word)) return [identityOf(word)];
  return [...word.matchAll(LOOKS_LIKE_HOST)]
    .filter((match) => !IN_PATH_OR_QUERY.test(word.slice(Math.max(0, match.index - 2), match.index)))
    .map((match) => identityOf(`http://${match[0]}`));
}

function identityOf(address) {
  // Anything that looks like an address but does not parse still claims to be one.
  if (!URL.canParse(address)) return address.toLowerCase();
  const parsed = new URL(address);
  return parsed.protocol === 'mailto:' ? `mailto:${parsed.pathname.toLowerCase()}` : addressIdentity(parsed);
}

function safelyDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
