import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxSnapshot } from '../sandbox-api.js';

/** A streamed answer changes the workspace many times a second; one snapshot per burst is enough. */
const COALESCE_MS = 40;
/** Proxies and browsers drop an event stream that stays silent too long. */
const KEEP_ALIVE_MS = 15_000;

/**
 * `GET /api/events`: Server-Sent Events carrying a `snapshot` at once and again after every change
 * (changes close together are sent as one snapshot).
 */
export function serveSnapshotEvents(options: {
  request: IncomingMessage;
  response: ServerResponse;
  snapshot: () => SandboxSnapshot;
  onChange: (listener: () => void) => () => void;
}): void {
  const { request, response } = options;
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let pending: NodeJS.Timeout | undefined;
  const send = () => {
    pending = undefined;
    response.write(`event: snapshot\ndata: ${JSON.stringify(options.snapshot())}\n\n`);
  };
  const unsubscribe = options.onChange(() => {
    pending ??= setTimeout(send, COALESCE_MS);
  });
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  request.on('close', () => {
    unsubscribe();
    clearInterval(keepAlive);
    clearTimeout(pending);
  });
  send();
}
