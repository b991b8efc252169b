import { describe, expect, it } from 'vitest';
import { worthTryingLater } from './post-failure.js';

describe('whether a failed Slack call is worth making again later', () => {
  it('is, when no answer came, or Slack failed or throttled it', () => {
    expect(worthTryingLater({ code: 'slack_webapi_request_error' })).toBe(true);
    expect(worthTryingLater({ code: 'slack_webapi_rate_limited_error' })).toBe(true);
    expect(worthTryingLater({ code: 'slack_webapi_http_error', statusCode: 503 })).toBe(true);
    expect(worthTryingLater({ code: 'slack_webapi_http_error', statusCode: 429 })).toBe(true);
    expect(worthTryingLater({ code: 'slack_webapi_http_error', statusCode: 408 })).toBe(true);
    expect(worthTryingLater({ code: 'slack_webapi_platform_error', data: { error: 'internal_error' } })).toBe(true);
    expect(worthTryingLater(new Error('A rate limit was exceeded (url: https://slack.com/api/chat.postMessage, retry-after: 7)'))).toBe(true);
  });

  it('is not, when Slack refused it: a later try is refused again', () => {
    for (const error of ['channel_not_found', 'not_in_channel', 'is_archived', 'token_revoked', 'msg_too_long']) {
      expect(worthTryingLater({ code: 'slack_webapi_platform_error', data: { error } })).toBe(false);
    }
    expect(worthTryingLater({ code: 'slack_webapi_http_error', statusCode: 404 })).toBe(false);
    expect(worthTryingLater(new Error('something else'))).toBe(false);
    expect(worthTryingLater(undefined)).toBe(false);
  });
});
