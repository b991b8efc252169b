import { isStoreUnavailable } from '../store/store-unavailable.js';
import { withoutUrlUserinfo } from '../tools/http/url-userinfo.js';
import { untrustedNoticeText } from './untrusted-notice-text.js';

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
  // A URL's user and password are removed before the line is cut, so a cut never leaves the start of
  // a password without its `@`.
  const firstLine = withoutUrlUserinfo(message.split('\n')[0] ?? 'unknown error', '…').replace(TOKEN, '[redacted]');
  return untrustedNoticeText(firstLine, { maxLength: 200 });
}
