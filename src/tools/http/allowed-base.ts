/**
 * Whether a URL the model (or an approver's edit) asks for lies under one of the configured bases:
 * same scheme, host and port, and a path inside the base path after the URL is normalised, so
 * `https://api.example.com/v1/../admin` is `/admin` and not under `/v1/`.
 */

export interface AllowedUrl<BASE> {
  base: BASE;
  /** The normalised URL that is actually requested. */
  url: URL;
}

export function findAllowedBase<BASE extends { url: string }>(bases: readonly BASE[], text: string): AllowedUrl<BASE> | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '') return undefined;
  // An encoded slash or backslash could be decoded by the server into a path outside the base.
  if (/%2f|%5c/i.test(url.pathname)) return undefined;
  for (const base of bases) {
    const allowed = new URL(base.url);
    if (url.origin !== allowed.origin) continue;
    if (url.pathname.startsWith(allowed.pathname) || `${url.pathname}/` === allowed.pathname) return { base, url };
  }
  return undefined;
}

/** `https://api.example.com/v1/, https://status.example.com/` for messages and the tool description. */
export function describeBases(bases: readonly { url: string }[]): string {
  return bases.map((base) => base.url).join(', ');
}
