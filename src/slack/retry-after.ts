/** What `createPerCallRateLimits` throws once it waited out a 429, as the client's own words: `A rate limit was exceeded (url: …, retry-after: 7)`. */
const RETRY_AFTER = /retry-after: (\d+)/;

/** How long Slack asked for before another call, when `error` (what a Web API call threw) is a rate limit's. */
export function retryAfterMsOf(error: unknown): number | undefined {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as { retryAfter?: unknown; message?: unknown; original?: { message?: unknown } };
  // A 429 handed to the client as it came (the status line, or no Retry-After): rejected, with the number itself.
  if (typeof failure.retryAfter === 'number') return failure.retryAfter * 1000;
  for (const message of [failure.message, failure.original?.message]) {
    const seconds = typeof message === 'string' ? RETRY_AFTER.exec(message)?.[1] : undefined;
    if (seconds !== undefined) return Number(seconds) * 1000;
  }
  return undefined;
}
