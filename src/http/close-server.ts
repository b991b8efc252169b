import type { Server, ServerOptions } from 'node:http';

/**
 * How long a stop lets the requests already in flight finish before it cuts their connections.
 * Slack gives up on a request after 3 s, so past this no request Slack sent is still waited for:
 * what is left is a client still sending its body, or never reading its answer. Anyone can open
 * one on the public port (the body is read before its signature is checked), and Node's `close()`
 * would wait for it for ever: once `close()` starts, `requestTimeout` is no longer checked.
 */
export const STOP_DRAIN_MS = 3_000;

/**
 * Limits for a server the internet reaches (PORT, where Slack posts). Slack's requests are small
 * and sent at once, and it stops waiting for an answer after 3 s, so a request whose headers take
 * 15 s, or which is not all in after 30 s, is not one Slack still waits for: these are generous
 * for a slow link and still free a connection someone holds open by sending nothing (Node's
 * defaults: 60 s and 300 s). Node checks them every `connectionsCheckingInterval` (default 30 s,
 * which would double the 30 s), so that is shortened too.
 */
export const PUBLIC_SERVER_TIMEOUTS = { headersTimeout: 15_000, requestTimeout: 30_000, connectionsCheckingInterval: 5_000 } satisfies ServerOptions;

/**
 * Stops `server` without waiting on a client that never finishes: it takes no new connection and
 * closes the idle keep-alive ones at once, lets the requests in flight finish for `drainMs`, then
 * closes every connection left, so the stop goes on. Resolves once the server is closed.
 */
export async function closeServer(
  server: Server,
  options: {
    /** Default `STOP_DRAIN_MS`. */
    drainMs?: number;
    /** How the server is closed, when something else owns it (Bolt's receiver: `app.stop()`); default `server.close()`. */
    close?: () => Promise<unknown>;
  } = {},
): Promise<void> {
  const { drainMs = STOP_DRAIN_MS, close = () => new Promise((resolve) => server.close(resolve)) } = options;
  const closed = close();
  server.closeIdleConnections();
  const cut = setTimeout(() => server.closeAllConnections(), drainMs);
  try {
    await closed;
  } finally {
    clearTimeout(cut);
  }
}
