import { sharedLeanFetch } from '../http/lean-fetch.js';

/** What a failed Slack Web API response is counted as; see `OperationMetrics.slackApiFailed`. */
export type SlackApiFailure = { method: string; error: string };

/**
 * A `fetch` for `@slack/web-api` clients that reports every failed response: Slack answers most
 * failures with HTTP 200 and `ok: false`, throttling with a 429 that the client then retries, and
 * neither reaches the caller as a count. Each 429 is reported, so retries are visible too.
 */
export function createObservedSlackFetch(options: { onFailure: (failure: SlackApiFailure) => void; fetch?: typeof globalThis.fetch }): typeof globalThis.fetch {
  const inner = options.fetch ?? sharedLeanFetch();
  const report = (failure: SlackApiFailure) => {
    try {
      options.onFailure(failure);
    } catch {
      // Counting must never fail a call.
    }
  };
  return async (input, init) => {
    const method = methodOf(input);
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      report({ method, error: isTimeout(error) ? 'timeout' : 'network' });
      throw error;
    }
    if (response.status === 429) report({ method, error: 'rate_limited' });
    else if (response.status !== 200) report({ method, error: `http_${response.status}` });
    else if (response.headers.get('content-type')?.includes('application/json')) {
      // Read once and handed on as read: a clone would tee the body stream and read it twice,
      // which cost more CPU than any other part of a Slack call.
      const text = await response.text();
      const body = parseJson(text) as { ok?: unknown; error?: unknown } | undefined;
      if (body?.ok === false) report({ method, error: slackErrorCode(body.error) });
      return withReadBody(response, text);
    }
    return response;
  };
}

/** The response, its body already read as `text`: `text()` and `json()` answer from that. */
function withReadBody(response: Response, text: string): Response {
  Object.defineProperties(response, {
    text: { value: async () => text },
    json: { value: async () => JSON.parse(text) },
  });
  return response;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `https://slack.com/api/chat.postMessage` → `chat.postMessage`. */
function methodOf(input: string | URL | Request): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const last = URL.parse(url)?.pathname.split('/').pop();
  return last && /^[a-zA-Z0-9_.]{1,80}$/.test(last) ? last : 'unknown';
}

/** Slack's codes are short snake_case words; anything else is not let into a label. */
function slackErrorCode(error: unknown): string {
  return typeof error === 'string' && /^[a-z0-9_]{1,64}$/.test(error) ? error : 'unknown';
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}
