/** A Slack link to `url` (a permalink from `chat.getPermalink`), unless `url` could break out of the link syntax. */
export function permalinkLink(url: string | undefined, label: string): string | undefined {
  return url !== undefined && /^https?:\/\/[^\s<>|]+$/.test(url) ? `<${url}|${label}>` : undefined;
}
