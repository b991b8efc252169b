import { isStoreUnavailable } from '../store/store-unavailable.js';

/** One line, bounded, with anything shaped like a credential removed: errors can echo them back. */
export function shortError(error: unknown): string {
  // The reader needs the cause, not the client's advice.
  if (isStoreUnavailable(error)) return 'the state store (Redis) is unreachable';
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = (message.split('\n')[0] ?? 'unknown error').replace(/\b(sk-|xox[a-z]-|xapp-)[\w-]+/g, '[redacted]');
  return firstLine.length > 200 ? `${firstLine.slice(0, 200)}…` : firstLine;
}
