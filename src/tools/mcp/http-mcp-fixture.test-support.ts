import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach } from 'vitest';
import { z } from 'zod';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type CreateMcpServerOptions, type McpRetryOptions, type McpServerHandle } from './mcp-server.js';
import { DELETE_DATABASE_TOOL } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Pieces of a hand-written Streamable HTTP MCP server (a session per initialize) and of the handle `ops`
 * a test connects to it, for tests that shape the server's answers themselves.
 */

/** For the tests of the file that calls this at its top level: what a test hands the function returned is closed after it, last first. */
export function useClosing(): (close: () => Promise<void>) => void {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closing.length > 0) await closing.pop()!();
  });
  return (close) => void closing.push(close);
}

/** Serves `handler` on 127.0.0.1 (closed by `closeAfter`) and returns its /mcp URL. */
export async function listenOnLoopback(handler: (request: IncomingMessage, response: ServerResponse) => Promise<void>, closeAfter: (close: () => Promise<void>) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfter(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Answers a GET with an event stream kept open, and in `streams` until it closes. */
export function openEventStream(streams: Set<ServerResponse>, response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.flushHeaders();
  streams.add(response);
  response.on('close', () => streams.delete(response));
}

/** What a fake server returns about `streams` (its open GET event streams): how many, and a way to end them all (a proxy closing long-lived responses). */
export function eventStreamControls(streams: Set<ServerResponse>): { openStreams: () => number; endStreams: () => void } {
  return {
    openStreams: () => streams.size,
    endStreams: () => {
      for (const stream of streams) stream.end();
    },
  };
}

/** The JSON-RPC message a POST carries. */
export async function readMessage<T>(request: IncomingMessage): Promise<T> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

/** Answers request `id` with `body` (its `result` or `error`) as JSON. */
export function answerJson(response: ServerResponse, id: number | string, body: object, headers: Record<string, string> = {}): void {
  response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
}

/**
 * The JSON-RPC message of a POST: a notification (no id) is answered 202 and gives undefined; a request
 * comes with its id and `json`, which answers it (`answerJson`).
 */
export async function readRequest<T extends { id?: number | string }>(
  request: IncomingMessage,
  response: ServerResponse,
): Promise<{ message: T; id: number | string; json: (body: object, headers?: Record<string, string>) => void } | undefined> {
  const message = await readMessage<T>(request);
  const id = message.id;
  if (id === undefined) return void response.writeHead(202).end();
  return { message, id, json: (body, headers) => answerJson(response, id, body, headers) };
}

/** What the server answers initialize with: a server that says when its tools change. */
export const INITIALIZE_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 's', version: '1' } };

/** The tool the fake servers offer unless a test needs its own: `deploy`, taking a `service`. */
export const DEPLOY_TOOL = { name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } };

/**
 * A POST's JSON-RPC request past the handshake (`readRequest`), or undefined when it was answered here:
 * a notification (202), or initialize (`INITIALIZE_RESULT`, with the session id `session` makes when given).
 */
export async function readCall(
  request: IncomingMessage,
  response: ServerResponse,
  { session }: { session?: () => string } = {},
): Promise<{ message: { id?: number; method: string; params?: any }; id: number | string; json: (body: object, headers?: Record<string, string>) => void } | undefined> {
  const post = await readRequest<{ id?: number; method: string; params?: any }>(request, response);
  if (!post) return undefined;
  if (post.message.method === 'initialize') return void post.json({ result: INITIALIZE_RESULT }, session ? { 'mcp-session-id': session() } : {});
  return post;
}

/** A handle `ops` for the server at `url`: unless given, logging nothing and told nothing of its changes. */
export function createOpsHandle(
  options: { url: string; timeoutSeconds?: number; retry?: Partial<McpRetryOptions> } & Partial<Pick<CreateMcpServerOptions, 'logger' | 'onToolsChanged' | 'onProblem' | 'onRecovered'>>,
): McpServerHandle {
  const timeout = options.timeoutSeconds === undefined ? '' : `    timeoutSeconds: ${options.timeoutSeconds}\n`;
  const config = parseConfigFile(`mcpServers:\n  ops:\n    url: ${options.url}\n${timeout}`, 'test.yml').mcpServers!.ops!;
  return createMcpServer({
    name: 'ops',
    config,
    env: {},
    logger: options.logger ?? pino({ level: 'silent' }),
    problems: [],
    onToolsChanged: options.onToolsChanged ?? (() => {}),
    onProblem: options.onProblem ?? (() => {}),
    onRecovered: options.onRecovered ?? (() => {}),
    ...(options.retry ? { retry: options.retry } : {}),
  });
}

/**
 * A handle `ops` (as `createOpsHandle`) for the server at `url`, closed by `closeAfter`, started, and
 * returned once `ready` (when given) answers truthy: the test's barrier, as its event stream open.
 */
export async function startOpsHandle(options: {
  url: string;
  closeAfter: (close: () => Promise<void>) => void;
  timeoutSeconds?: number;
  retry?: Partial<McpRetryOptions>;
  ready?: () => unknown;
  readyWhat?: string;
}): Promise<McpServerHandle> {
  const { closeAfter, ready, readyWhat, ...handleOptions } = options;
  const handle = createOpsHandle(handleOptions);
  closeAfter(() => handle.close());
  await handle.start();
  if (ready) await until(ready, readyWhat ?? 'the event stream open');
  return handle;
}

/**
 * A stateless server (GET answered 405, no session) offering delete_database, and a handle `ops` started on
 * it (both closed by `closeAfter`), with `held`, the definition of ops.delete_database it offers. `server.ran`
 * holds the arguments of each tools/call received; `server.failNextList` answers the next tools/list 503 (a
 * load balancer's while a backend drains: a connection failure). `beforeList` and `beforeCall`, when given, are
 * awaited before a tools/list or tools/call is answered (one the client gave up on meanwhile is not answered).
 */
export async function startStatelessServer(options: {
  closeAfter: (close: () => Promise<void>) => void;
  beforeList?: (response: ServerResponse) => Promise<void>;
  beforeCall?: () => Promise<void>;
}) {
  const { closeAfter, beforeList, beforeCall } = options;
  const server = { ran: [] as unknown[], failNextList: false };
  const url = await listenOnLoopback(async (request, response) => {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const message = await readMessage<{ id?: number; method: string; params?: { arguments?: unknown } }>(request);
    if (message.id === undefined) return void response.writeHead(202).end();
    if (message.method === 'initialize') return answerJson(response, message.id, { result: INITIALIZE_RESULT });
    if (message.method === 'tools/list') {
      if (server.failNextList) {
        server.failNextList = false;
        return void response.writeHead(503, { 'content-type': 'text/plain' }).end('backend draining');
      }
      await beforeList?.(response);
      if (response.destroyed) return;
      return answerJson(response, message.id, { result: { tools: [DELETE_DATABASE_TOOL] } });
    }
    if (message.method === 'tools/call') {
      server.ran.push(message.params?.arguments);
      await beforeCall?.();
      if (response.destroyed) return;
      return answerJson(response, message.id, { result: { content: [{ type: 'text', text: 'dropped' }] } });
    }
    return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
  }, closeAfter);
  const handle = await startOpsHandle({ url, closeAfter });
  const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
  return { server, handle, held, url };
}

/**
 * The official SDK's stateless Streamable HTTP example (a server and transport per POST, GET answered 405)
 * offering delete_database, as a request handler. Its "deploy" is `server.version`: version 1 drops a database
 * and keeps its backups; version 2 (a redeploy) drops the backups too unless told not to (`keepBackups`).
 * `server.ran` holds each call run, with the version that ran it.
 */
export function statelessSdkServer() {
  const server = { version: 1 as 1 | 2, ran: [] as Array<{ version: number; args: unknown }> };
  const handler = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') return void response.writeHead(405, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method not allowed."},"id":null}');
    const running = server.version;
    const sdk = new McpServer({ name: 'ops', version: String(running) });
    if (running === 1) {
      sdk.tool('delete_database', 'Drop a database (its backups are kept)', { name: z.string() }, async (args) => {
        server.ran.push({ version: running, args });
        return { content: [{ type: 'text' as const, text: 'dropped, backups kept' }] };
      });
    } else {
      sdk.tool('delete_database', 'Drop a database', { name: z.string(), keepBackups: z.boolean().default(false) }, async (args) => {
        server.ran.push({ version: running, args });
        return { content: [{ type: 'text' as const, text: `dropped, backups ${args.keepBackups ? 'kept' : 'dropped'}` }] };
      });
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => void transport.close().then(() => sdk.close()));
    await sdk.connect(transport);
    await transport.handleRequest(request, response, await readMessage<unknown>(request));
  };
  return { server, handler };
}
