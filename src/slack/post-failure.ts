import { retryAfterMsOf } from './retry-after.js';
import { mayHaveBeenApplied, unconfirmedWriteStatus } from './unrepeated-slack-writes.js';

/** Slack's answers (`ok: false`) that say it failed on its side for now, not that it refuses the call. */
const SLACK_FAILING = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'ratelimited']);

/**
 * Slack's answers (`ok: false`) that its documentation says may come after "some aspect of the
 * operation succeeded": a post answered so may stand in the conversation all the same.
 */
const SLACK_PARTLY_DONE = new Set(['internal_error', 'fatal_error']);

/**
 * Whether Slack may have applied a write that failed: its reply was lost (`mayHaveBeenApplied`: a
 * timeout, a dropped connection, a 5xx), or Slack answered one of the errors above. Made again
 * without a look, such a post may show twice.
 */
export function mayHaveLanded(error: unknown): boolean {
  if (mayHaveBeenApplied(error)) return true;
  const failure = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; data?: { error?: unknown } };
  return failure.code === 'slack_webapi_platform_error' && typeof failure.data?.error === 'string' && SLACK_PARTLY_DONE.has(failure.data.error);
}

/**
 * HTTP statuses a later try may get past: Slack failed (5xx), throttled (429), or an edge stopped
 * waiting for the request (408). Any other (a 4xx) refuses the request itself.
 */
function failedForNow(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

/**
 * Whether a failed Web API call may succeed if made again later: no answer came (the network; a write
 * the client would not send again, `mayHaveBeenApplied`, after a timeout or a connection lost after it
 * went out, is among these), or Slack failed or throttled it (a 5xx, a 429, the errors above). Not when
 * Slack refused it (`channel_not_found`, `not_in_channel`, `is_archived`, a revoked token, an HTTP 4xx:
 * also on a write the client would not send again, which the guard reports as a request error): a
 * later try would be refused again.
 */
export function worthTryingLater(error: unknown): boolean {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; statusCode?: unknown; data?: { error?: unknown }; message?: unknown };
  switch (failure.code) {
    case 'slack_webapi_request_error': {
      const status = unconfirmedWriteStatus(error);
      return status === undefined || failedForNow(status);
    }
    case 'slack_webapi_rate_limited_error':
      return true;
    case 'slack_webapi_http_error':
      return typeof failure.statusCode === 'number' && failedForNow(failure.statusCode);
    case 'slack_webapi_platform_error':
      return typeof failure.data?.error === 'string' && SLACK_FAILING.has(failure.data.error);
    default:
      // A rate limit `createPerCallRateLimits` waited out, out of the client's tries: a plain Error naming its Retry-After.
      return retryAfterMsOf(error) !== undefined;
  }
}
