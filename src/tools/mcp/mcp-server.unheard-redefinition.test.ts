import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { answerJson, createOpsHandle, INITIALIZE_RESULT, listenOnLoopback, openEventStream, readMessage, statelessSdkServer, useClosing } from './http-mcp-fixture.test-support.js';
import { DELETE_DATABASE_TOOL, DELETE_DATABASE_WITH_BACKUPS, outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * MCP over HTTP, "a turn keeps the tool definitions it started with": the held definition was
 * compared at call time only with the bot's cached list, which was refreshed only when the server's
 * change was heard (tools/list_changed on an event stream, a reopened stream) or at (re)connect. Where
 * no change can be heard, a server redefined since the turn began ran the redefined tool on an
 * approval/grant/auto-approve bound to the old definition.
 */
const closeAfter = useClosing();

/**
 * A Streamable HTTP server with sessions (an event stream per session, in `streams`) offering delete_database,
 * until `redefine()` makes it drop the backups too unless told not to. `ran` holds each tools/call it received;
 * `beforeInitialize`, when given, is awaited before the nth initialize is answered.
 */
function sessionServer(options: { beforeInitialize?: (session: number) => Promise<void> } = {}) {
  const streams = new Set<ServerResponse>();
  let schemaVersion: 1 | 2 = 1;
  let sessions = 0;
  const ran: Array<{ session: string; schemaVersion: number; args: unknown }> = [];
  const handler = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === 'GET') {
      if (!request.headers['mcp-session-id']) return void response.writeHead(405).end();
      return openEventStream(streams, response);
    }
    if (request.method === 'DELETE') return void response.writeHead(200).end();
    const message = await readMessage<{ id?: number; method: string; params?: { arguments?: unknown } }>(request);
    if (message.id === undefined) return void response.writeHead(202).end();
    const session = String(request.headers['mcp-session-id']);
    if (message.method === 'initialize') {
      sessions += 1;
      const id = `session-${sessions}`;
      await options.beforeInitialize?.(sessions);
      return answerJson(response, message.id, { result: INITIALIZE_RESULT }, { 'mcp-session-id': id });
    }
    if (message.method === 'tools/list') return answerJson(response, message.id, { result: { tools: [schemaVersion === 1 ? DELETE_DATABASE_TOOL : DELETE_DATABASE_WITH_BACKUPS] } });
    if (message.method === 'tools/call') {
      ran.push({ session, schemaVersion, args: message.params?.arguments });
      return answerJson(response, message.id, { result: { content: [{ type: 'text', text: 'dropped' }] } });
    }
    return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
  };
  return { streams, ran, handler, redefine: () => (schemaVersion = 2) };
}

describe('a held MCP definition the HTTP server redefined, where the bot cannot hear the change', () => {
  it('a stateless Streamable HTTP server (official SDK, GET answered 405): a redeploy that redefines the tool is never noticed', { timeout: 30_000 }, async () => {
    // The official SDK's stateless example: a server and transport per POST, GET answered 405. Its "deploy" is which version it runs.
    const { server, handler } = statelessSdkServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = createOpsHandle({ url });
    closeAfter(() => handle.close());
    await handle.start();
    expect(handle.status().state).toBe('connected');
    // A turn starts: it holds this definition; a card is approved (or a grant / auto-approve lets it through) for it.
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    expect(JSON.stringify(held.inputSchema)).not.toContain('keepBackups');

    // The server is redeployed: delete_database now drops the backups unless told not to.
    server.version = 2;
    // Barrier: the redeployed server answers (a tools/list straight to it shows the new schema).
    const probe = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }).then((answer) => answer.text());
    expect(probe).toContain('keepBackups');

    // The approved call of the held definition, later: it must be refused (its definition is not the server's now).
    const result = await outcome(held.execute!({ name: 'staging' }, context));
    expect({ result, ran: server.ran }).toEqual({ result: { refused: 'not-offered' }, ran: [] });
  });

  it('a session server whose event stream ended: a change made before the replacement connection is up runs on the old definition', { timeout: 30_000 }, async () => {
    let releaseSecondInitialize: (() => void) | undefined;
    const secondInitialize = new Promise<void>((resolve) => (releaseSecondInitialize = resolve));
    let secondInitializeAsked = false;
    const { streams, ran, redefine, handler } = sessionServer({
      beforeInitialize: async (session) => {
        if (session === 2) {
          secondInitializeAsked = true;
          await secondInitialize;
        }
      },
    });
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = createOpsHandle({ url });
    closeAfter(async () => {
      releaseSecondInitialize?.();
      await handle.close();
    });
    await handle.start();
    await until(() => streams.size > 0, 'the event stream open');
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;

    // A proxy ends the long-lived response (routine, README); the bot knows its stream is gone and connects again alongside.
    for (const stream of streams) stream.end();
    // The server's tools change meanwhile: its tools/list_changed has no stream to go on.
    redefine();
    // Barrier: the replacement connection is being set up (its initialize held: a slow server, a proxy).
    await until(() => secondInitializeAsked, 'the replacement connection under way');

    // The approved call of the held definition: the bot knows a change may have gone unheard, yet runs it.
    // Refused on the tools/list read for the call (on the connection still in use), which shows the new schema: `not-offered`.
    const result = await outcome(held.execute!({ name: 'staging' }, context));
    expect({ result, ran }).toEqual({ result: { refused: 'not-offered' }, ran: [] });
  });
  it('a session server whose event stream went silent (a NAT/firewall dropped the idle connection): its list_changed is lost and the bot, with no warning, runs the old definition', { timeout: 30_000 }, async () => {
    const { streams, ran, redefine, handler } = sessionServer();
    const upstream = await listenOnLoopback(handler, closeAfter);
    // A middlebox between bot and server: forwards both ways; once `silenced`, what the server sends on the event stream's connection is dropped (no FIN, no RST).
    const upstreamPort = Number(new URL(upstream).port);
    const streamSockets = new Set<Socket>();
    let silenced = false;
    const sockets = new Set<Socket>();
    const proxy = createTcpServer((client) => {
      const server = connect(upstreamPort, '127.0.0.1');
      sockets.add(client).add(server);
      client.on('data', (chunk) => server.write(chunk));
      server.on('data', (chunk: Buffer) => {
        if (chunk.toString('latin1').includes('text/event-stream')) streamSockets.add(client);
        if (silenced && streamSockets.has(client)) return;
        client.write(chunk);
      });
      client.on('close', () => server.destroy());
      server.on('close', () => client.destroy());
      client.on('error', () => {});
      server.on('error', () => {});
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    closeAfter(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    });
    const handle = createOpsHandle({ url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp` });
    closeAfter(() => handle.close());
    await handle.start();
    await until(() => streams.size > 0 && streamSockets.size > 0, 'the event stream open');
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;

    silenced = true;
    // The server redefines the tool and says so on the session's stream, as the spec asks; it reaches no one.
    redefine();
    for (const stream of streams) stream.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);

    const result = await outcome(held.execute!({ name: 'staging' }, context));
    expect({ result, ran, warnings: handle.status().warnings }).toEqual({ result: { refused: 'not-offered' }, ran: [], warnings: undefined });
  });
  it('a server on the 2026-07-28 protocol (no event stream with this client; documented): a redefinition is never noticed', { timeout: 30_000 }, async () => {
    let schemaVersion: 1 | 2 = 1;
    const ran: number[] = [];
    const tool = () => (schemaVersion === 1 ? DELETE_DATABASE_TOOL : DELETE_DATABASE_WITH_BACKUPS);
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      if (request.method !== 'POST') return void response.writeHead(405).end();
      const message = await readMessage<{ id?: number; method: string }>(request);
      if (message.id === undefined) return void response.writeHead(202).end();
      // A 2026-07-28 result says its resultType (the client refuses one without it, and falls back to initialize after discovery).
      if (message.method === 'server/discover') return answerJson(response, message.id, { result: { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: { listChanged: true } } } });
      if (message.method === 'tools/list') return answerJson(response, message.id, { result: { resultType: 'complete', tools: [tool()] } });
      if (message.method === 'tools/call') {
        ran.push(schemaVersion);
        return answerJson(response, message.id, { result: { resultType: 'complete', content: [{ type: 'text', text: 'dropped' }] } });
      }
      return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
    }, closeAfter);
    const handle = createOpsHandle({ url });
    closeAfter(() => handle.close());
    await handle.start();
    expect(handle.status().state).toBe('connected');
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    schemaVersion = 2;
    const result = await outcome(held.execute!({ name: 'staging' }, context));
    expect({ result, ran }).toEqual({ result: { refused: 'not-offered' }, ran: [] });
  });
});
