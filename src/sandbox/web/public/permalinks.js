/**
 * Slack permalinks into the sandbox (`<page>/archives/C0OPS/p1795590428724000`, as the emulator's
 * chat.getPermalink makes them) open the message's thread in the page instead of a new tab.
 */

/** `{ channel, ts }` for a permalink to this page, else undefined. */
export function permalinkTarget(href, origin) {
  let url;
  try {
    url = new URL(href, origin);
  } catch {
    return undefined;
  }
  if (url.origin !== origin) return undefined;
  const match = /^\/archives\/([A-Z0-9]+)\/p(\d{7,})$/.exec(url.pathname);
  if (!match) return undefined;
  const digits = match[2];
  const ts = url.searchParams.get('thread_ts') ?? `${digits.slice(0, -6)}.${digits.slice(-6)}`;
  return { channel: match[1], ts };
}

/** The thread a message is shown in: its parent's ts (its own, for a top-level message). */
export function threadOf(snapshot, { channel, ts }) {
  const message = snapshot.messages.find((candidate) => candidate.channel === channel && candidate.ts === ts);
  if (!message) return undefined;
  return message.threadTs ?? message.ts;
}
