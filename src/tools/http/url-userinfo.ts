/**
 * The userinfo of a URL (`scheme://user:password@`), up to the last `@` before the host ends, as URL
 * parsers read it. Node's fetch refuses such a URL with an error that quotes it whole, and a server
 * can quote its own database URL; the bot's notices and logs (`shortError`) and an MCP server's
 * redactor (`redactingUrlCredentials`) both remove it with this one pattern.
 *
 * The scheme is bounded to 32 characters (no registered scheme is longer). Unbounded, every word
 * boundary in a run of letters, digits, dots, `+` and `-` (`a.a.a.…`, text any tool may return)
 * started a scan to the end of the run: quadratic time, 200 KB blocked the event loop for 20 s.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#]*@/gi;

/** `text` with the userinfo of every URL in it replaced by `replacement`: `https://…@host/`. */
export function withoutUrlUserinfo(text: string, replacement: string): string {
  return text.replace(URL_USERINFO, (_userinfo, scheme: string) => `${scheme}${replacement}@`);
}

/**
 * A URL whose authority runs to the end of the text (`postgres://admin:S3cr`): if the text was cut
 * there, its `@` may lie past the cut, so everything after `://` may be a user and part of a password.
 */
const UNFINISHED_AUTHORITY = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#]*$/i;

/** Where the authority of a URL that runs to the end of `text` starts (just after `://`), if one does. */
export function unfinishedUrlAuthority(text: string): number | undefined {
  const found = UNFINISHED_AUTHORITY.exec(text);
  return found === null ? undefined : found.index + (found[1]?.length ?? 0);
}
