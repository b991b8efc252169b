import { markdownToMrkdwn, type MarkdownToMrkdwnOptions } from '../format/markdown-to-mrkdwn.js';
import { fenceLeftOpen, normaliseLineEndings } from '../format/parse-markdown.js';
import { splitMessage } from '../format/split-message.js';

/** A message of only spaces and invisible characters (a zero-width space) reads as an empty one. */
const INVISIBLE = /^[\s\p{Cf}]*$/u;

/**
 * The messages an answer is shown in: safe mrkdwn, cut before Slack's size limit. Pure, and
 * applied to the whole text so far on every update, so a half-written answer renders as safely as
 * a finished one (an unclosed fence simply runs to the end, as CommonMark reads it).
 */
export function renderAnswer(markdown: string, options: MarkdownToMrkdwnOptions = {}): string[] {
  return splitMessage(markdownToMrkdwn(markdown, options));
}

/**
 * Whether an answer of `markdown` would show the reader nothing: text that is not blank can render
 * to no message at all (an empty code block, a lone link reference definition, `&nbsp;`). A native
 * stream sends `safeMarkdown` of the text, blank only when the text is, so this holds in both modes.
 */
export function answerShowsNothing(markdown: string): boolean {
  return renderAnswer(markdown).every((message) => INVISIBLE.test(message));
}

/**
 * `markdown` with a fenced code block it leaves open at its end closed (see `fenceLeftOpen`), so
 * text the bot adds after an answer (the content filter's note) is not shown inside the code.
 */
export function withOpenCodeClosed(markdown: string): string {
  const fence = fenceLeftOpen(normaliseLineEndings(markdown));
  if (fence === undefined) return markdown;
  return `${markdown}${/\r?\n$/.test(markdown) ? '' : '\n'}${fence}`;
}
