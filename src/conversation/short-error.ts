/** What ioredis says when Redis cannot be reached; the reader needs the cause, not the client's advice. */
const STORE_UNREACHABLE = /max retries per request|Connection is closed|ECONNREFUSED|Stream isn't writeable|enableOfflineQueue/i;

/** One line, bounded, with anything shaped like a credential removed: errors can echo them back. */
export function shortError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (STORE_UNREACHABLE.test(message)) return 'the state store (Redis) is unreachable';
  const firstLine = (message.split('\n')[0] ?? 'unknown error').replace(/\b(sk-|xox[a-z]-|xapp-)[\w-]+/g, '[redacted]');
  return firstLine.length > 200 ? `${firstLine.slice(0, 200)}…` : firstLine;
}
