import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createOpsHandle, INITIALIZE_RESULT, listenOnLoopback, readRequest, useClosing } from './http-mcp-fixture.test-support.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * A call whose own tools/list is answered on an event stream that breaks (a proxy cuts it, the backend
 * restarts) is refused as not run because the server is unavailable, not because its list is stale: the
 * error answer made up for the broken stream (broken-answer.ts) reaches the call through @ai-sdk/mcp, which
 * copies its `data` onto the MCPClientError, and `isBrokenAnswer` reads that `data` to tell it from a server's
 * own error answer. Without it the call would be refused `list-stale`, and the connection not taken as lost.
 */
const closeAfter = useClosing();

async function fakeServer() {
  let lists = 0;
  const heldLists: ServerResponse[] = [];
  const calls: unknown[] = [];
  const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const post = await readRequest<{ id?: number; method: string; params?: any }>(request, response);
    if (!post) return;
    const { message, json } = post;
    if (message.method === 'initialize') return json({ result: INITIALIZE_RESULT });
    if (message.method === 'tools/list') {
      lists += 1;
      // The handle's first list is answered; the call's own is answered on an event stream the test breaks.
      if (lists === 1) return json({ result: { tools: [{ name: 'deploy', inputSchema: { type: 'object', properties: {} } }] } });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(': working\n\n');
      heldLists.push(response);
      return;
    }
    if (message.method === 'tools/call') calls.push(message.params);
    json({ error: { code: -32601, message: 'Method not found' } });
  }, closeAfter);
  return { url, heldLists, calls };
}

describe('an HTTP MCP call whose own tools/list answer stream breaks', () => {
  it('is refused as not run, the server unavailable (not its list stale)', { timeout: 30_000 }, async () => {
    const fake = await fakeServer();
    const handle = createOpsHandle({ url: fake.url, timeoutSeconds: 15 });
    closeAfter(() => handle.close());
    await handle.start();
    const deploy = handle.tools()[0]!;

    const call = outcome(deploy.execute({}, context) as Promise<unknown>);
    await until(() => fake.heldLists.length === 1, "the call's tools/list received");
    fake.heldLists[0]!.destroy();

    expect({ call: await call, calls: fake.calls }).toEqual({ call: { refused: 'server-unavailable' }, calls: [] });
  });
});
