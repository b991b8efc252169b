import { isStoreUnavailable } from '../store/store-unavailable.js';
import { untrustedNoticeText } from './untrusted-notice-text.js';

/**
 * A URL's user and password (`https://user:password@host`), up to the last `@` before its path:
 * Node's `fetch` refuses such a URL with an error that quotes it whole. Removed before the line is
 * cut, so a cut never leaves the start of a password without its `@`. The scheme is bounded so that
 * a long run of letters and dots costs linear time, not quadratic.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@]*(?:@[^\s/?#@]*)*@/gi;
const TOKEN = /\b(sk-|xox[a-z]-|xapp-)[\w-]+/g;

/**
 * One line, bounded, with anything shaped like a credential removed: errors can echo them back.
 * Ready to splice into a notice (mrkdwn): an error can quote what a provider, a model or a tool
 * sent, so its links and mentions are escaped rather than left to work.
 */
export function shortError(error: unknown): string {
  // The reader needs the cause, not the client's advice.
  if (isStoreUnavailable(error)) return 'the state store (Redis) is unreachable';
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = (message.split('\n')[0] ?? 'unknown error').replace(URL_USERINFO, '$1…@').replace(TOKEN, '[redacted]');
  return untrustedNoticeText(firstLine, { maxLength: 200 });
}
