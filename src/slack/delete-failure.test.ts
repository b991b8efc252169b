import { WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError } from '@slack/web-api';
import { describe, expect, it } from 'vitest';
import { deleteFailure } from './delete-failure.js';

describe('a failed chat.delete', () => {
  it('leaves nothing to remove when Slack says the message is gone or not the bot’s to delete', () => {
    expect(deleteFailure(new WebAPIPlatformError({ ok: false, error: 'message_not_found' }))).toEqual({ gone: true });
    expect(deleteFailure(new WebAPIPlatformError({ ok: false, error: 'cant_delete_message' }))).toEqual({ gone: true });
  });

  it("is tried again otherwise, not before a rate limit's retry-after", () => {
    expect(deleteFailure(new WebAPIPlatformError({ ok: false, error: 'internal_error' }))).toEqual({ gone: false });
    expect(deleteFailure(new Error('HTTP 503'))).toEqual({ gone: false });
    expect(deleteFailure(new WebAPIRequestError(new Error('A rate limit was exceeded (url: https://slack.com/api/chat.delete, retry-after: 7)')))).toEqual({ gone: false, retryAfterMs: 7_000 });
    expect(deleteFailure(new WebAPIRateLimitedError(3))).toEqual({ gone: false, retryAfterMs: 3_000 });
  });
});
