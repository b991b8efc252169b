/**
 * Calls only worth making now: a rate-limited one is given up at once, not made again after Slack's
 * Retry-After. The thread's status line ("is thinking…") is cosmetic, and stale by then.
 */
const NOT_WAITED_FOR = new Set(['assistant.threads.setStatus']);

/**
 * The fetch of a Web API client made with `rejectRateLimitedCalls: true`, which waits out a 429 per
 * call. Slack limits each method (per workspace) on its own, but the client, left to handle a 429
 * itself, pauses its whole request queue for the Retry-After: a throttled status line would hold
 * back every card update and answer of the process, and the turn waiting for that status line
 * would wait through the client's retries (three times the Retry-After). With that option the
 * client rejects a 429 at once and retries nothing; so here a rate-limited call waits out its own
 * Retry-After, alone, and is then made again through the client's retry policy (the tries count as
 * any failure's did). A call in `NOT_WAITED_FOR`, or a 429 without a Retry-After, is handed to the
 * client as it came: rejected at once (`WebAPIRateLimitedError`, with `retryAfter`).
 */
export function createPerCallRateLimits({ fetch, pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms)) }: { fetch: typeof globalThis.fetch; pause?: (ms: number) => Promise<void> }): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.status !== 429) return response;
    const url = urlOf(input);
    const seconds = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
    if (Number.isNaN(seconds) || NOT_WAITED_FOR.has(methodOf(url))) return response;
    await response.body?.cancel().catch(() => {});
    await pause(seconds * 1000);
    // Slack applied nothing: the client tries it again (not a write it may have applied, `createUnrepeatedSlackWrites`).
    // Worded as the client's own, which the callers read a rate limit's wait from (`retryAfterMsOf`).
    throw new Error(`A rate limit was exceeded (url: ${url}, retry-after: ${seconds})`);
  };
}

function urlOf(input: string | URL | Request): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/** `https://slack.com/api/chat.postMessage` → `chat.postMessage`. */
function methodOf(url: string): string {
  return URL.parse(url)?.pathname.split('/').pop() ?? '';
}
