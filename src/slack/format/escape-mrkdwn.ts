/**
 * Escaping for untrusted text placed in Slack mrkdwn. Slack only treats `&`, `<` and `>` as control
 * characters; `<` is what starts links, mentions and `<!channel>`, so once it is escaped nothing
 * in the text can ping or link anywhere.
 */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export const ZERO_WIDTH_SPACE = '\u200B';

/**
 * Puts a zero-width space between adjacent backticks, so untrusted text can neither open nor
 * close a ``` code block around it. The text still looks the same.
 */
export function breakBacktickRuns(text: string): string {
  return text.replace(/`(?=`)/g, `\`${ZERO_WIDTH_SPACE}`);
}
