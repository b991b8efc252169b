import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SlackDelivery } from '../emulator/delivery/slack-delivery.js';
import { listenOnLoopback, sendJson } from '../emulator/loopback-http.js';
import type { SlackEmulator } from '../emulator/slack-emulator.js';
import { sandboxSourcePath } from '../package-root.js';
import { API_POST_ROUTES, serveApiPost, type ApiRouteContext } from './api-routes.js';
import { linkMentions } from './mention-links.js';
import { ownHosts, refuseForeignRequest } from './own-page-requests.js';
import { sandboxSnapshot, type SandboxDirectory } from './sandbox-snapshot.js';
import { serveSnapshotEvents } from './snapshot-events.js';
import { serveStaticFile } from './static-files.js';

export interface SandboxServerOptions {
  emulator: SlackEmulator;
  delivery: SlackDelivery;
  directory: SandboxDirectory;
  /** The page says it is talking to the built-in demo model. */
  demoModel: boolean;
  /** Default: src/sandbox/web/public of this package, also when running from dist/. */
  publicDirectory?: string;
  /** Default 127.0.0.1: the sandbox acts as anyone in its workspace, so it is not for the network. */
  host?: string;
  /** Default: any free port. */
  port?: number;
}

export interface SandboxServer {
  port: number;
  close(): Promise<void>;
}

/** The sandbox page and its API (sandbox-api.ts), on node:http. */
export async function startSandboxServer(options: SandboxServerOptions): Promise<SandboxServer> {
  const { emulator, directory, demoModel } = options;
  const publicDirectory = options.publicDirectory ?? sandboxSourcePath('web', 'public');
  const handles = new Map([
    ...directory.users.map((user) => [user.name.toLowerCase(), user.id] as const),
    [directory.botName.toLowerCase(), emulator.state.identity.botUserId] as const,
  ]);
  const context: ApiRouteContext = {
    delivery: options.delivery,
    known: { users: new Set(directory.users.map((user) => user.id)), channels: new Set(directory.channels.map((channel) => channel.id)) },
    linkMentions: (text) => linkMentions({ text, handles }),
  };
  const snapshot = () => sandboxSnapshot({ state: emulator.state, directory, demoModel });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // The port the request came in on: the one the page was loaded from (also when port 0 picked it).
    const refusal = refuseForeignRequest({ headers: request.headers, ownHosts: ownHosts({ port: request.socket.localPort ?? 0, ...(options.host ? { configuredHost: options.host } : {}) }) });
    if (refusal) {
      response.writeHead(refusal.status, { 'content-type': 'text/plain; charset=utf-8' });
      return void response.end(`${refusal.message}\n`);
    }
    const path = new URL(request.url ?? '/', 'http://sandbox.invalid').pathname;
    const method = request.method ?? 'GET';
    const postRoute = API_POST_ROUTES[path];
    if (postRoute !== undefined) {
      if (method !== 'POST') return sendJson({ response, status: 405, headers: { allow: 'POST' }, body: { ok: false, error: `${path} takes POST` } });
      return serveApiPost({ route: postRoute, request, response, context });
    }
    if (method !== 'GET' && method !== 'HEAD') return sendJson({ response, status: 405, headers: { allow: 'GET' }, body: { ok: false, error: `${path} takes GET` } });
    if (path === '/' || path === '/index.html') return serveStaticFile({ root: publicDirectory, path: 'index.html', response });
    if (path.startsWith('/static/')) return serveStaticFile({ root: publicDirectory, path: path.slice('/static/'.length), response });
    if (path === '/api/state') return sendJson({ response, body: snapshot() });
    if (path === '/api/events') return serveSnapshotEvents({ request, response, snapshot, onChange: (listener) => emulator.onChange(listener) });
    // Permalinks the bot posts (chat.getPermalink) point here; the page shows the whole channel.
    if (path.startsWith('/archives/')) {
      response.writeHead(302, { location: '/' });
      return void response.end();
    }
    sendJson({ response, status: 404, body: { ok: false, error: `no route ${path}` } });
  }

  const server = await listenOnLoopback({ listener: handle, ...(options.host ? { host: options.host } : {}), ...(options.port === undefined ? {} : { port: options.port }) });
  return { port: server.port, close: () => server.close() };
}
