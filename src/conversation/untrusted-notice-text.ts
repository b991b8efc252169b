/**
 * Text the bot did not write (an error message, what an MCP server printed) made safe to splice into
 * a notice, which is mrkdwn: `&`, `<` and `>` escaped, so none of it can become a link, a user
 * mention or `<!here>`; backticks kept apart, so it cannot open a code block over the rest; and cut
 * at `maxLength` characters (before escaping, so no entity is cut in half). `postNotice` already
 * defuses plain `@here` words. The same rules as `slack/format/untrusted-text.ts`, which the core
 * may not import (ARCHITECTURE.md).
 */
export function untrustedNoticeText(text: string, { maxLength }: { maxLength: number }): string {
  const kept = text.length > maxLength ? `${wholeCharacters(text, maxLength - 1).trimEnd()}…` : text;
  return kept.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replace(/`(?=`)/g, '`\u200B');
}

/** The first `end` code units, one fewer when the last would be half of a surrogate pair. */
function wholeCharacters(text: string, end: number): string {
  const last = text.charCodeAt(end - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, end - 1) : text.slice(0, end);
}
