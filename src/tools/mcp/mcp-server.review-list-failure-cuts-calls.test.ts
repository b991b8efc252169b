import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answerJson, INITIALIZE_RESULT, listenOnLoopback, readMessage, startOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import { DELETE_DATABASE_TOOL, outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Review of 791bf51: every HTTP MCP call now reads a tools/list of its own first. A list that fails with a
 * "connection failure" (isConnectionFailure: any HTTP status >= 500, e.g. one 503 from a load balancer while a
 * backend drains) calls `lost()`, which closes the client in use: every other call under way on it, whose
 * tools/call the server received and is carrying out, has its answer stream aborted and is recorded as failed,
 * though it ran (and a grant or auto-approve lets the model send it again).
 */
const closeAfter = useClosing();

describe("an HTTP MCP call under way when another call's own tools/list gets a 503", () => {
  it('still gets its answer (the server ran it)', { timeout: 30_000 }, async () => {
    const server = { ran: [] as unknown[], failNextList: false, finish: undefined as (() => void) | undefined };
    const handler = async (request: IncomingMessage, response: ServerResponse) => {
      if (request.method !== 'POST') return void response.writeHead(405).end();
      const message = await readMessage<{ id?: number; method: string; params?: { arguments?: unknown } }>(request);
      if (message.id === undefined) return void response.writeHead(202).end();
      if (message.method === 'initialize') return answerJson(response, message.id, { result: INITIALIZE_RESULT });
      if (message.method === 'tools/list') {
        if (server.failNextList) {
          server.failNextList = false;
          return void response.writeHead(503, { 'content-type': 'text/plain' }).end('backend draining');
        }
        return answerJson(response, message.id, { result: { tools: [DELETE_DATABASE_TOOL] } });
      }
      if (message.method === 'tools/call') {
        server.ran.push(message.params?.arguments);
        // A slow tool: it is carried out, and answered once the test lets it.
        await new Promise<void>((resolve) => (server.finish = resolve));
        if (response.destroyed) return;
        return answerJson(response, message.id, { result: { content: [{ type: 'text', text: 'dropped' }] } });
      }
      return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
    };
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    closeAfter(async () => server.finish?.());
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;

    // Call 1 (approved): its list is read, tools/call reaches the server, which works on it.
    const first = outcome(held.execute!({ name: 'staging' }, context));
    await until(() => server.ran.length === 1, "the first call's tools/call received");

    // Call 2 (another thread): its own tools/list gets one 503. It is refused as not run: fine.
    server.failNextList = true;
    const second = await outcome(held.execute!({ name: 'other' }, context));
    expect(second).toEqual({ refused: expect.any(String) });

    // The server finishes the first call and answers it.
    server.finish!();
    const result = await first;
    expect({ ran: server.ran, first: result }).toEqual({ ran: [{ name: 'staging' }], first: { ran: expect.objectContaining({ text: 'dropped' }) } });
  });
});
