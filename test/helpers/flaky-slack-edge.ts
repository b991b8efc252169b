import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeSlackApi } from './fake-slack-api.js';

/**
 * How Slack's edge loses the reply to a call its backend has already applied; `internal-error`: Slack
 * answers `ok: false, error: internal_error` ("some aspect of the operation" may have succeeded).
 */
export type LostReply = 'bad-gateway' | 'late' | 'dropped' | 'internal-error';

export interface FlakySlackEdge {
  /** The Web API base URL to give the client (`…/api/`). */
  url: string;
  close(): Promise<void>;
}

/**
 * A proxy in front of the fake Slack: every call reaches Slack and takes effect there, but the first
 * call to `method` that `matches` loses its reply as `lost` says: a 502 from the edge, no answer until
 * the proxy closes (long after the client's timeout), the connection closed once the request was read, or
 * Slack's own internal_error.
 */
export async function startFlakySlackEdge(
  slack: FakeSlackApi,
  options: { method: string; lost: LostReply; matches?: (form: URLSearchParams) => boolean },
): Promise<FlakySlackEdge> {
  let fired = false;
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const upstream = await fetch(new URL(request.url ?? '/', slack.url), {
      method: 'POST',
      headers: { 'content-type': String(request.headers['content-type'] ?? ''), authorization: String(request.headers.authorization ?? '') },
      body,
    });
    const text = await upstream.text();
    const picked = request.url?.endsWith(`/${options.method}`) && (options.matches?.(new URLSearchParams(body.toString())) ?? true);
    if (!fired && picked) {
      fired = true;
      if (options.lost === 'bad-gateway') {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<html>502 Bad Gateway</html>');
        return;
      }
      if (options.lost === 'internal-error') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ok: false, error: 'internal_error' }));
        return;
      }
      if (options.lost === 'dropped') request.socket.destroy();
      return;
    }
    response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
