import { markdownToMrkdwn, type MarkdownToMrkdwnOptions } from '../format/markdown-to-mrkdwn.js';
import { splitMessage } from '../format/split-message.js';

/**
 * The messages an answer is shown in: safe mrkdwn, cut before Slack's size limit. Pure, and
 * applied to the whole text so far on every update, so a half-written answer renders as safely as
 * a finished one (an unclosed fence simply runs to the end, as CommonMark reads it).
 */
export function renderAnswer(markdown: string, options: MarkdownToMrkdwnOptions = {}): string[] {
  return splitMessage(markdownToMrkdwn(markdown, options));
}
