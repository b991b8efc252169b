import { linkLabelIsHonest } from './link-to-mrkdwn.js';
import { inertMention, neutralisePlainBroadcasts, specialMentionLabel } from './neutralise-pings.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const INLINE_CODE = /(`+[^`]*?`+)/;
const MARKDOWN_LINK = /\[([^\]\n]*)\]\(((?:[^()\s]|\([^()\s]*\))+)\)/g;
const SPECIAL_MENTION = /<!([^<>]*)>/g;
/** `<@U…>` and `<#C…>` the model wrote on purpose; every other `<` (and `&`, which could spell one) is shown as text. */
const KEPT_REFERENCE = /^<[@#][A-Z0-9]+>/;

export interface SafeMarkdownState {
  /** The fence that opened the code block we are in, if any. */
  fence?: string;
}

/**
 * Makes one line of the model's standard markdown safe for Slack's `markdown_text` (native
 * streaming), where Slack renders it: no broadcast or group ping survives; `<` and `&` cannot start
 * Slack markup, HTML or an entity (they are backslash-escaped, which CommonMark shows as plain
 * characters); a link whose label names another address shows its real target. Code is left
 * verbatim. Line by line, with the fence state carried over, so a streamed prefix of whole lines
 * never changes once sent.
 */
export function safeMarkdownLine(line: string, state: SafeMarkdownState): string {
  const fence = FENCE.exec(line)?.[1];
  if (state.fence !== undefined) {
    if (fence !== undefined && fence[0] === state.fence[0] && fence.length >= state.fence.length && line.trim() === fence) delete state.fence;
    return line;
  }
  if (fence !== undefined) {
    state.fence = fence;
    return line;
  }
  // The split keeps code spans at odd indexes.
  return line
    .split(INLINE_CODE)
    .map((piece, index) => (index % 2 === 1 ? piece : safeProse(piece)))
    .join('');
}

/** A whole text, for a final or non-streamed rendering. */
export function safeMarkdown(markdown: string): string {
  const state: SafeMarkdownState = {};
  return markdown
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => safeMarkdownLine(line, state))
    .join('\n');
}

function safeProse(text: string): string {
  // Between links, a `](` closes a label that began on an earlier line, unchecked: it is broken up.
  let withLinks = '';
  let last = 0;
  for (const match of text.matchAll(MARKDOWN_LINK)) {
    const [whole, label = '', url = ''] = match;
    withLinks += text.slice(last, match.index).replaceAll('](', '\\](');
    withLinks += linkLabelIsHonest({ url, label }) ? whole : `${label} (${url.replaceAll('<', '%3C')})`;
    last = match.index + whole.length;
  }
  withLinks += text.slice(last).replaceAll('](', '\\](');
  const withoutMentions = withLinks.replace(SPECIAL_MENTION, (whole, body: string) => (body.startsWith('date^') ? whole : inertMention(specialMentionLabel(body))));
  let result = '';
  for (let index = 0; index < withoutMentions.length; index++) {
    const character = withoutMentions[index] as string;
    const escaped = withoutMentions[index - 1] === '\\';
    const kept = character === '<' && KEPT_REFERENCE.test(withoutMentions.slice(index));
    result += (character === '<' || character === '&') && !escaped && !kept ? `\\${character}` : character;
  }
  return neutralisePlainBroadcasts(result);
}
