import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import type { McpRetryOptions } from './mcp-server.js';
import { until } from './until.test-support.js';

/**
 * A Streamable HTTP MCP server (legacy protocol, a session per initialize) whose GET event stream the
 * test can end (a server or proxy that closes long-lived responses, as the spec lets it) or break, and
 * whose next GETs it can answer with a status (a proxy's 502/503 while the server restarts). A tools/call
 * answers "done", or waits until the test releases it (`holdNextCall`); `calls()` names the session of each,
 * `deleted()` the sessions a client ended.
 */
export async function startEventStreamServer() {
  const streams = new Set<ServerResponse>();
  let tools = [{ name: 'status', inputSchema: { type: 'object', properties: {} } }];
  let getStatus: number | undefined;
  let refusedGets: number | undefined;
  let sessions = 0;
  const calls: string[] = [];
  const deleted: string[] = [];
  let held: Promise<void> | undefined;
  let gets = 0;
  let lists = 0;
  const json = (response: ServerResponse, body: object, headers: Record<string, string> = {}) =>
    response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

  async function handle(request: IncomingMessage, response: ServerResponse) {
    if (request.method === 'GET') {
      gets += 1;
      if (getStatus !== undefined || refusedGets !== undefined) {
        const status = getStatus ?? refusedGets!;
        getStatus = undefined;
        return void response.writeHead(status).end('upstream restarting');
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
      streams.add(response);
      response.on('close', () => streams.delete(response));
      return;
    }
    if (request.method === 'DELETE') deleted.push(String(request.headers['mcp-session-id']));
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string };
    if (message.id === undefined) return void response.writeHead(202).end();
    if (message.method === 'initialize') {
      return json(
        response,
        { jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 's', version: '1' } } },
        { 'mcp-session-id': `session-${(sessions += 1)}` },
      );
    }
    if (message.method === 'tools/list') lists += 1;
    if (message.method === 'tools/list') return json(response, { jsonrpc: '2.0', id: message.id, result: { tools } });
    if (message.method === 'tools/call') {
      calls.push(String(request.headers['mcp-session-id']));
      const wait = held;
      held = undefined;
      await wait;
      return json(response, { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }] } });
    }
    return json(response, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
  }

  const server = createServer((request, response) => void handle(request, response).catch(() => response.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    openStreams: () => streams.size,
    gets: () => gets,
    lists: () => lists,
    /** Says its tools changed `times` times in a row (a buggy server in a loop, or one registering tools one by one). */
    spam: (times: number) => {
      const line = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;
      for (const stream of streams) stream.write(line.repeat(times));
    },
    /** The next GET is answered with this status. */
    answerNextGet: (status: number) => (getStatus = status),
    /** Every GET from now on is answered with this status (undefined: opened again). */
    refuseGets: (status: number | undefined) => (refusedGets = status),
    calls: () => [...calls],
    deleted: () => [...deleted],
    /** The next tools/call is answered once the function returned is called. */
    holdNextCall: () => {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      return release;
    },
    endStreams: () => {
      for (const stream of streams) stream.end();
    },
    breakStreams: () => {
      for (const stream of streams) stream.destroy();
    },
    setTools: (next: typeof tools) => {
      tools = next;
      for (const stream of streams) stream.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * For the tests of the file that calls this at its top level: `connected()` starts a
 * `startEventStreamServer` and a handle `ops` connected to it, once its event stream is open; both
 * are closed after the test.
 */
export function useEventStreamServers() {
  const closeAfter = useClosing();
  return async function connected(options: { retry?: Partial<McpRetryOptions> } = {}) {
    const fake = await startEventStreamServer();
    closeAfter(() => fake.close());
    const handle = createOpsHandle({ url: fake.url, ...(options.retry ? { retry: options.retry } : {}) });
    closeAfter(() => handle.close());
    await handle.start();
    await until(() => fake.openStreams() > 0, 'the event stream open');
    return { fake, handle };
  };
}
