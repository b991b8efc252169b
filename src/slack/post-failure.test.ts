import { describe, expect, it } from 'vitest';
import { mayHaveLanded, worthTryingLater } from './post-failure.js';
import { unconfirmedWriteError } from './unrepeated-slack-writes.js';

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

describe('whether Slack may have applied a failed write', () => {
  it('may, when its reply was lost or Slack answered an error it says may follow part of the work', () => {
    expect(mayHaveLanded(unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('502'), status: 502 }))).toBe(true);
    expect(mayHaveLanded({ code: 'slack_webapi_platform_error', data: { error: 'internal_error' } })).toBe(true);
    expect(mayHaveLanded({ code: 'slack_webapi_platform_error', data: { error: 'fatal_error' } })).toBe(true);
  });

  it('did not, when Slack refused it, throttled it or said it is unavailable', () => {
    for (const error of ['service_unavailable', 'ratelimited', 'channel_not_found', 'invalid_blocks']) {
      expect(mayHaveLanded({ code: 'slack_webapi_platform_error', data: { error } })).toBe(false);
    }
    expect(mayHaveLanded({ code: 'slack_webapi_http_error', statusCode: 503 })).toBe(false);
    expect(mayHaveLanded(undefined)).toBe(false);
  });
});
