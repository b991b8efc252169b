import type { Server, ServerOptions, ServerResponse } from 'node:http';

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

/** What `closeServer` needs of a server `closeConnectionsAtStop` watches: whether it is stopping, and its answers not yet sent. */
interface StopWatch {
  stopping: boolean;
  inFlight: Set<ServerResponse>;
}

const watched = new WeakMap<Server, StopWatch>();

/**
 * Lets `closeServer` keep every connection of `server` from carrying another request once the stop
 * begins. Node goes on answering `Connection: keep-alive` after `close()`, so whatever sits in front
 * of the port (a load balancer, Slack) may send its next request on a connection that was busy when
 * the stop began: the bot would run it, and the cut at the end of the drain would reset the
 * connection before its answer. Call it where the server is created, before it takes a request: a
 * request already in flight when the stop begins can only be reached from here.
 */
export function closeConnectionsAtStop<S extends Server>(server: S): S {
  const watch: StopWatch = { stopping: false, inFlight: new Set() };
  watched.set(server, watch);
  server.on('request', (_request, response: ServerResponse) => {
    // One that came on a connection still open when the stop began (its bytes were on the way).
    if (watch.stopping) return void (response.shouldKeepAlive = false);
    watch.inFlight.add(response);
    response.once('close', () => watch.inFlight.delete(response));
  });
  return server;
}

/**
 * Stops `server` without waiting on a client that never finishes: it takes no new connection and
 * closes the idle keep-alive ones at once, lets the requests in flight finish for `drainMs`, then
 * closes every connection left, so the stop goes on. Each answer sent from then on says
 * `Connection: close`, and its connection closes once it is sent, so none carries a request the
 * cut would leave unanswered (when `server` went through `closeConnectionsAtStop`). Resolves
 * once the server is closed.
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
  // A server made elsewhere without `closeConnectionsAtStop` still stops within the drain, only without
  // the keep-alive guard: a stop that threw instead would leave the process running.
  const watch = watched.get(server) ?? { stopping: false, inFlight: new Set<ServerResponse>() };
  watch.stopping = true;
  for (const response of watch.inFlight) {
    if (!response.headersSent) response.shouldKeepAlive = false;
    else {
      // Its headers already said keep-alive: end the connection once the answer is out (`end`, not
      // `destroy`, so what is still buffered is sent first).
      const { socket } = response;
      if (socket) response.once('finish', () => socket.end());
    }
  }
  const closed = close();
  server.closeIdleConnections();
  const cut = setTimeout(() => server.closeAllConnections(), drainMs);
  try {
    await closed;
  } finally {
    clearTimeout(cut);
  }
}
