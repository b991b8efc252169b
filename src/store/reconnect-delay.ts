/** The longest pause between attempts to reach a Redis that went away. */
const MAX_RECONNECT_DELAY_MS = 500;

/**
 * The bot's `retryStrategy` for ioredis. Its default backs off exponentially to 5 s, and a command
 * issued while the connection is down fails only after `maxRetriesPerRequest` more attempts: a few
 * seconds into an outage every command would wait 15 s to fail (a click for its "could not record",
 * `/healthz` for its 503), and a Redis that is back would be noticed up to 5 s late. Capped, both
 * stay within about a second.
 */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(attempt * 50, MAX_RECONNECT_DELAY_MS);
}
