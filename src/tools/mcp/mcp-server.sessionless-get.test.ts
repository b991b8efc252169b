import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { INITIALIZE_RESULT, listenOnLoopback, openEventStream, readRequest, startOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import type { McpServerHandle, McpServerStatus } from './mcp-server.js';
import { until } from './until.test-support.js';

/**
 * @ai-sdk/mcp opens the GET event stream as its transport starts, before initialize, so without
 * an Mcp-Session-Id; a session server (the official TypeScript SDK's StreamableHTTPServerTransport, as
 * here) answers that GET 400. Were that counted as a loss of the event stream on every connect and
 * reconnect, the first real loss would already be "the second in a row": warned at once, and waited
 * for twice as long; README: "1 s after the loss ..., from the second loss in a row ... mcp-event-stream-lost".
 */
const closeAfter = useClosing();

describe('an HTTP MCP server that answers a GET without a session 400 (as the official SDK does)', () => {
  it.each([
    { sessionlessGet: 400, case: 'answered 400 (the official SDK)' },
    { sessionlessGet: 405, case: 'control: answered 405 (passes)' },
  ])('does not warn mcp-event-stream-lost at the first loss of its event stream: sessionless GET $case', { timeout: 30_000 }, async ({ sessionlessGet }) => {
    const streams = new Set<ServerResponse>();
    let sessions = 0;
    let statusAtReconnect: McpServerStatus | undefined;
    let handle: McpServerHandle | undefined;
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      if (request.method === 'GET') {
        if (!request.headers['mcp-session-id']) return void response.writeHead(sessionlessGet, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"},"id":null}');
        return openEventStream(streams, response);
      }
      if (request.method === 'DELETE') return void response.writeHead(200).end();
      const post = await readRequest<{ id?: number; method: string }>(request, response);
      if (!post) return;
      const { message, json } = post;
      if (message.method === 'initialize') {
        // Barrier: the reconnect for the lost stream has begun; what the status said until now is recorded.
        if (sessions === 1) statusAtReconnect = handle!.status();
        return json({ result: INITIALIZE_RESULT }, { 'mcp-session-id': `session-${(sessions += 1)}` });
      }
      if (message.method === 'tools/list') return json({ result: { tools: [{ name: 'status', inputSchema: { type: 'object', properties: {} } }] } });
      // server/discover and the rest: as the SDK answers a request without a session.
      return void response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
    }, closeAfter);
    handle = await startOpsHandle({ url, closeAfter, ready: () => streams.size > 0 });
    expect(handle.status().warnings).toBeUndefined();

    // A proxy ends the long-lived response once: a routine first loss.
    for (const stream of streams) stream.end();
    await until(() => statusAtReconnect, 'the reconnect for the event stream');
    expect(statusAtReconnect!.warnings).toEqual(undefined);
  });
});
