const LINKABLE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const LOOKS_LIKE_EMAIL = /^(?:mailto:)?[^\s@]+@[^\s@]+\.\p{L}{2,}$/iu;
const EDGE_PUNCTUATION = /^["'([{<*_~`]+|["')\]}>*_~`.,;:!?]+$/g;
/**
 * `example.com`, `login.example.co.uk`, `10.0.0.5`, anywhere in a word: dot-separated labels ending in
 * a letters-only one (or four numbers). A reader takes it for an address whatever is glued to it.
 */
const LOOKS_LIKE_HOST = /(?<![\p{L}\p{N}\p{M}_.-])(?:(?:[\p{L}\p{N}\p{M}_-]+\.)+\p{L}[\p{L}\p{M}]+|(?:\d{1,3}\.){3}\d{1,3})(?![\p{L}\p{N}\p{M}_-])/gu;
/** A host-like run after one `/` (not `//`), `?`, `#`, `=` or `&` is a file or a parameter (`docs/setup.md`), not where a link goes. */
const IN_PATH_OR_QUERY = /(?:^|[^/])\/$|[?#=&]$/;
/**
 * Characters a reader does not see: zero-width spaces and joiners, bidirectional controls, fillers
 * (Hangul, Mongolian, braille blank), variation selectors, tags, other control and unassigned code
 * points. One of them in a label could hide an address from the check below while Slack shows the
 * label unchanged, so a label with any is not trusted at all.
 */
const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cs}\p{Co}\p{Cn}\u2800]|(?![\t\n\v\f\r])\p{Cc}/u;
/** An emoji (its joiners and variation selectors included): the one place hidden characters are ordinary. */
// biome-ignore lint/complexity/useRegexLiterals: tsc refuses the `v` flag in a literal below an ES2024 target; Node 22 has it.
const EMOJI = new RegExp('\\p{RGI_Emoji}', 'gv');
/** The full stops browsers read as dots in a host name (UTS #46). */
const IDEOGRAPHIC_FULL_STOPS = /[\u3002\uFF0E\uFF61]/g;
/** What ends a word: anything but ASCII punctuation, letters, digits and marks (spaces, dashes, quotes, `’`, symbols). */
const WORD_BREAK = /[^!-~\p{L}\p{N}\p{M}]+/u;

/** A web or mail address Slack can link, or undefined. */
export function parseLinkTarget(url: string): URL | undefined {
  const trimmed = url.trim();
  if (!URL.canParse(trimmed)) return undefined;
  const parsed = new URL(trimmed);
  return LINKABLE_PROTOCOLS.has(parsed.protocol) ? parsed : undefined;
}

/**
 * Whether a markdown link may keep its label as the clickable text: only when the target is a
 * web or mail address and the label does not name some other address.
 */
export function linkLabelIsHonest({ url, label }: { url: string; label: string }): boolean {
  const target = parseLinkTarget(url);
  return target !== undefined && !labelNamesAnotherAddress({ label: label.replace(/\*\*|__|~~|`/g, '').trim(), target });
}

/**
 * Whether the label, as a reader sees it, names an address other than the target's host (or
 * mailbox), or hides characters that could disguise one. The model's text is untrusted: `[paypal.com](https://evil)`,
 * `[paypal.com’s login](…)` and `[paypal.com\u200B](…)` all name another address.
 */
export function labelNamesAnotherAddress({ label, target }: { label: string; target: URL }): boolean {
  const visible = label.replace(EMOJI, ' ');
  if (HIDDEN.test(visible)) return true;
  const targetIdentity = addressIdentity(target);
  return visible
    .normalize('NFKC')
    .replace(IDEOGRAPHIC_FULL_STOPS, '.')
    .split(WORD_BREAK)
    .some((word) => claimedIdentities(word.replace(EDGE_PUNCTUATION, '')).some((identity) => identity !== targetIdentity));
}

/** The part of an address a reader trusts: the host for web links, the mailbox for email. */
function addressIdentity(url: URL): string {
  if (url.protocol === 'mailto:') return `mailto:${safelyDecode(url.pathname).toLowerCase()}`;
  return url.hostname.toLowerCase().replace(/^www\./, '').replace(/\.$/, '');
}

/** The addresses one word of a label names. */
function claimedIdentities(word: string): string[] {
  if (LOOKS_LIKE_EMAIL.test(word)) return [`mailto:${word.replace(/^mailto:/i, '').toLowerCase()}`];
  if (HAS_SCHEME.test(word)) return [identityOf(word)];
  return [...word.matchAll(LOOKS_LIKE_HOST)]
    .filter((match) => !IN_PATH_OR_QUERY.test(word.slice(Math.max(0, match.index - 2), match.index)))
    .map((match) => identityOf(`http://${match[0]}`));
}

function identityOf(address: string): string {
  // Anything that looks like an address but does not parse still claims to be one.
  if (!URL.canParse(address)) return address.toLowerCase();
  const parsed = new URL(address);
  return parsed.protocol === 'mailto:' ? `mailto:${parsed.pathname.toLowerCase()}` : addressIdentity(parsed);
}

function safelyDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
