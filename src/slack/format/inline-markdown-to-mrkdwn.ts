import { breakBacktickRuns, escapeMrkdwn } from './escape-mrkdwn.js';
import { linkToMrkdwn } from './link-to-mrkdwn.js';
import { inertMention, neutralisePlainBroadcasts, specialMentionLabel } from './neutralise-pings.js';

export interface InlineConversionOptions {
  allowUserMentions: boolean;
}

/**
 * Tokens whose content must not be touched by emphasis conversion or escaping, in one regex so
 * they are found left to right and never overlap: backslash escapes, code spans, markdown links
 * and images, `<…>` sequences, bare URLs.
 */
const PROTECTED_TOKEN = new RegExp(
  [
    String.raw`\\([\\` + '`' + String.raw`*_~\[\]()#+\-.!|<>&])`,
    // Whole backtick runs only (no backtracking into shorter ones), or long runs cost quadratic time.
    '(?<!`)(`+)(?!`)([^`]|[^`][^\\n]*?[^`])\\2(?!`)',
    String.raw`!?\[([^\[\]\n]*)\]\(\s*<?((?:[^\s()<>]|\([^\s()<>]*\))+)>?(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)`,
    String.raw`<([^<>\n]+)>`,
    'https?:\\/\\/[^\\s<>`]+',
  ].join('|'),
  'g',
);

const USER_REFERENCE = /^@[UW][A-Z0-9]{2,40}(?:\|[\p{L}\p{N} ._-]{0,80})?$/u;
const CHANNEL_REFERENCE = /^#C[A-Z0-9]{2,40}(?:\|[\p{L}\p{N}._-]{0,80})?$/u;
const DATE_TOKEN = /^!date\^\d{1,12}\^[{}\p{L}\p{N}\s:,._/-]{1,100}(?:\|[\p{L}\p{N}\s:,._/+-]{0,100})?$/u;
const TRAILING_URL_PUNCTUATION = /[.,;:!?'"*_~]$/;

/** Private-use characters stand in for protected tokens while the rest of the line is rewritten. */
const TOKEN_START = '\uE000';
const TOKEN_END = '\uE001';
const BOLD = '\uE002';
const TOKEN_REFERENCE = /\uE000(\d+)\uE001/g;

/** Converts one line of markdown inline syntax to escaped, ping-free Slack mrkdwn. */
export function inlineMarkdownToMrkdwn(line: string, { allowUserMentions }: InlineConversionOptions): string {
  const text = line.replace(/[\uE000-\uE002]/g, '\uFFFD');
  const rendered: string[] = [];
  const protect = (mrkdwn: string): string => `${TOKEN_START}${rendered.push(mrkdwn) - 1}${TOKEN_END}`;
  let output = '';
  let consumed = 0;
  for (const match of text.matchAll(PROTECTED_TOKEN)) {
    output += text.slice(consumed, match.index);
    consumed = match.index + match[0].length;
    const [whole, escaped, , code, label, url, angle] = match;
    if (escaped !== undefined) output += protect(escapeMrkdwn(escaped));
    else if (code !== undefined) output += protect(codeSpan(code));
    else if (url !== undefined) output += protect(linkToMrkdwn({ url, label: label ?? '' }));
    else if (angle !== undefined) output += angleToken(angle, allowUserMentions, protect) ?? whole;
    else {
      const link = trimTrailingPunctuation(whole);
      // Where Slack's own URL detection stops is unknowable; a ping word must not follow it.
      output += protect(neutralisePlainBroadcasts(escapeMrkdwn(link))) + whole.slice(link.length);
    }
  }
  output += text.slice(consumed);
  // A stray ``` left in the text would open a code block that swallows the rest of the message.
  const converted = neutralisePlainBroadcasts(convertEmphasis(breakBacktickRuns(escapeMrkdwn(output))));
  return converted.replace(TOKEN_REFERENCE, (_whole, index: string) => rendered[Number(index)] ?? '');
}

function codeSpan(content: string): string {
  // Slack code spans cannot contain a backtick; a look-alike keeps the content readable.
  return `\`${neutralisePlainBroadcasts(escapeMrkdwn(content.replaceAll('`', '\u02CB')))}\``;
}

/** `<…>` written by the model: keep what is safe, defuse pings, escape the rest (`undefined`). */
function angleToken(body: string, allowUserMentions: boolean, protect: (mrkdwn: string) => string): string | undefined {
  if (body.startsWith('@')) return allowUserMentions && USER_REFERENCE.test(body) ? protect(`<${body}>`) : undefined;
  if (body.startsWith('#')) return allowUserMentions && CHANNEL_REFERENCE.test(body) ? protect(`<${body}>`) : undefined;
  if (body.startsWith('!')) {
    return protect(DATE_TOKEN.test(body) ? `<${body}>` : escapeMrkdwn(inertMention(specialMentionLabel(body.slice(1)))));
  }
  const separator = body.indexOf('|');
  const url = separator === -1 ? body : body.slice(0, separator);
  if (!/^(?:https?:\/\/|mailto:)/i.test(url)) return undefined;
  return protect(linkToMrkdwn({ url, label: separator === -1 ? '' : body.slice(separator + 1) }));
}

function trimTrailingPunctuation(url: string): string {
  let result = url;
  for (;;) {
    const unbalancedParenthesis = result.endsWith(')') && count(result, '(') < count(result, ')');
    if (!TRAILING_URL_PUNCTUATION.test(result) && !unbalancedParenthesis) return result;
    result = result.slice(0, -1);
  }
}

function count(text: string, character: string): number {
  return text.split(character).length - 1;
}

/**
 * Markdown `**bold**`/`__bold__` → `*bold*`, `*italic*` → `_italic_`, `~~strike~~` → `~strike~`.
 * Bold goes through a placeholder so the italic pass does not read Slack's `*` as markdown italic.
 * Spans are capped so unclosed markers cost linear, not quadratic, time.
 */
function convertEmphasis(text: string): string {
  return text
    .replace(/\*\*\*(?=\S)([^\n]{1,1000}?)(?<=\S)\*\*\*/g, `${BOLD}_$1_${BOLD}`)
    .replace(/\*\*(?=\S)([^\n]{1,1000}?)(?<=\S)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^\p{L}\p{N}_])__(?=\S)([^\n]{1,1000}?)(?<=\S)__(?![\p{L}\p{N}_])/gu, `$1${BOLD}$2${BOLD}`)
    .replace(/(^|[^\p{L}\p{N}*])\*([^\s*](?:[^\n]{0,1000}?[^\s*])?)\*(?![\p{L}\p{N}*])/gu, '$1_$2_')
    .replace(/~~(?=\S)([^\n]{1,1000}?)(?<=\S)~~/g, '~$1~')
    .replaceAll(BOLD, '*');
}
