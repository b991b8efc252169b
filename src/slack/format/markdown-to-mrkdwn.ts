import { breakBacktickRuns, escapeMrkdwn } from './escape-mrkdwn.js';
import { inlineMarkdownToMrkdwn, type InlineConversionOptions } from './inline-markdown-to-mrkdwn.js';
import { neutralisePlainBroadcasts } from './neutralise-pings.js';

export { neutralisePings } from './neutralise-pings.js';

export interface MarkdownToMrkdwnOptions {
  /** Keep `<@U…>` mentions and `<#C…>` channel links the model wrote. Default true. */
  allowUserMentions?: boolean;
}

const FENCE_OPENING = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSING = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const HEADING = /^ {0,3}#{1,6}[ \t]+(.*)$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}(?:>[ \t]?)+(.*)$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(.*)$/;
const TASK_BOX = /^\[([ xX])\][ \t]+/;
const ORDERED_ITEM = /^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$/;
const TABLE_DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$/;

/**
 * Converts the model's markdown to Slack mrkdwn that is safe to post: every `&`, `<`, `>` is
 * escaped except the mentions we allow, no form of broadcast or group ping survives, link labels
 * cannot disguise their target, and code is kept verbatim (escaped, never reformatted).
 * The result is for `text` and `mrkdwn` text objects — not for `markdown` blocks or
 * `chat.*Stream` `markdown_text`, which take standard markdown.
 */
export function markdownToMrkdwn(markdown: string, { allowUserMentions = true }: MarkdownToMrkdwnOptions = {}): string {
  const options: InlineConversionOptions = { allowUserMentions };
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const output: string[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    const fence = FENCE_OPENING.exec(line);
    if (fence !== null && !(fence[1]?.startsWith('`') && fence[2]?.includes('`'))) {
      const closing = findClosingFence(lines, index + 1, fence[1] ?? '```');
      output.push(codeBlock(lines.slice(index + 1, closing)));
      index = closing + 1;
    } else if (line.includes('|') && TABLE_DELIMITER.test(lines[index + 1] ?? '')) {
      // Slack has no tables; monospace keeps the columns aligned.
      let end = index + 2;
      while (end < lines.length && (lines[end] ?? '').includes('|')) end++;
      output.push(codeBlock(lines.slice(index, end)));
      index = end;
    } else {
      output.push(convertLine(line, options));
      index++;
    }
  }
  return output.join('\n');
}

/** CommonMark: the same character, at least as long; an unclosed fence runs to the end. */
function findClosingFence(lines: string[], from: number, opening: string): number {
  for (let index = from; index < lines.length; index++) {
    const marker = FENCE_CLOSING.exec(lines[index] ?? '')?.[1];
    if (marker !== undefined && marker[0] === opening[0] && marker.length >= opening.length) return index;
  }
  return lines.length;
}

/** Slack ignores the language tag, so it is dropped; backtick runs inside cannot close the block. */
function codeBlock(lines: string[]): string {
  if (lines.every((line) => line.trim() === '')) return '';
  const body = lines.map((line) => neutralisePlainBroadcasts(breakBacktickRuns(escapeMrkdwn(line))));
  return ['```', ...body, '```'].join('\n');
}

/** `## Title ##` → `Title`. A loop, not a regex: runs of spaces made the regex quadratic. */
function withoutClosingHashes(heading: string): string {
  const trimmed = heading.trim();
  let end = trimmed.length;
  while (end > 0 && trimmed[end - 1] === '#') end--;
  if (end === 0) return '';
  return end < trimmed.length && /[ \t]/.test(trimmed[end - 1] ?? '') ? trimmed.slice(0, end).trimEnd() : trimmed;
}

function convertLine(line: string, options: InlineConversionOptions): string {
  if (line.trim() === '') return '';
  if (THEMATIC_BREAK.test(line)) return '──────────';
  const heading = HEADING.exec(line);
  if (heading !== null) {
    // Bold markers inside a heading would close Slack's bold early.
    const content = inlineMarkdownToMrkdwn(withoutClosingHashes(heading[1] ?? '').replace(/\*\*|__/g, ''), options);
    return content.trim() === '' ? '' : `*${content}*`;
  }
  const quote = QUOTE.exec(line);
  if (quote !== null) {
    // Slack quotes are one level deep and are the one place a raw `>` is markup.
    const content = convertLine(quote[1] ?? '', options);
    return content === '' ? '>' : `> ${content}`;
  }
  const bullet = BULLET.exec(line);
  if (bullet !== null) {
    const [, indent = '', item = ''] = bullet;
    const task = TASK_BOX.exec(item);
    const box = task === null ? '' : task[1] === ' ' ? '☐ ' : '☑ ';
    return `${indent}• ${box}${inlineMarkdownToMrkdwn(item.slice(task?.[0].length ?? 0), options)}`;
  }
  const ordered = ORDERED_ITEM.exec(line);
  if (ordered !== null) {
    const [, indent = '', number = '', item = ''] = ordered;
    return `${indent}${number}. ${inlineMarkdownToMrkdwn(item, options)}`;
  }
  return inlineMarkdownToMrkdwn(line, options);
}
