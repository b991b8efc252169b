import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Shared plumbing for the emulator's servers: they bind 127.0.0.1 (on an ephemeral port unless one
 * is given), so parallel test files never collide and nothing is reachable from outside the machine.
 */
export interface LoopbackServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function listenOnLoopback(options: { listener: RequestListener; port?: number; host?: string }): Promise<LoopbackServer> {
  const server = createServer((request, response) => {
    // A throwing handler must not kill the process; answer 500 so the client sees it.
    Promise.resolve(options.listener(request, response)).catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson({ response, status: 500, body: { error: `server crashed: ${String(error)}` } });
      } else {
        response.destroy();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return { server, port, close: () => closeServer(server) };
}

/** Closes the server even when clients hold keep-alive, streaming or deliberately hanging connections. */
export async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

export async function readRequestBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(options: {
  response: ServerResponse;
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}): void {
  const payload = JSON.stringify(options.body);
  options.response.writeHead(options.status ?? 200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...options.headers,
  });
  options.response.end(payload);
}
