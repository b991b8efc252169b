import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createOpsHandle, DEPLOY_TOOL, listenOnLoopback, readCall, useClosing } from './http-mcp-fixture.test-support.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * One call's answer stream breaking (a proxy's read timeout cutting one long call, a backend of a load
 * balancer restarting) says nothing of the other calls under way: every HTTP MCP request is its own HTTP
 * request. Until 41d99b8, onBroken closed the connection's client at once, for the connection in use too,
 * so another call whose tools/call the server had received and was carrying out had its answer stream
 * aborted and was recorded as "ran and failed: Connection closed", though it ran and succeeded (and the
 * model, told it failed, could send it again: it ran twice). The broken call itself fails at once with the
 * made-up "Connection closed" answer (broken-answer.ts), not on its timeout.
 */
const closeAfter = useClosing();

async function fakeServer() {
  const held = new Map<string, { response: ServerResponse; id: number | string }>();
  const ran: string[] = [];
  const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const post = await readCall(request, response);
    if (!post) return;
    const { message, id, json } = post;
    if (message.method === 'tools/list') return json({ result: { tools: [DEPLOY_TOOL] } });
    if (message.method === 'tools/call') {
      const service = String((message.params?.arguments as { service?: string })?.service);
      ran.push(service);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
      held.set(service, { response, id });
      return;
    }
    json({ error: { code: -32601, message: 'Method not found' } });
  }, closeAfter);
  const answer = (service: string) => {
    const { response, id } = held.get(service)!;
    response.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `deployed ${service}` }] } })}\n\n`);
  };
  return { url, ran, held, answer };
}

describe("an HTTP MCP call under way when another call's answer stream breaks", () => {
  it('still gets its answer (the server ran it)', { timeout: 30_000 }, async () => {
    const fake = await fakeServer();
    const handle = createOpsHandle({ url: fake.url, timeoutSeconds: 15 });
    closeAfter(() => handle.close());
    await handle.start();
    const deploy = handle.tools()[0]!;

    // Two calls under way (two threads): the server received both tools/calls and is carrying them out.
    const first = outcome(deploy.execute({ service: 'api' }, context) as Promise<unknown>);
    const second = outcome(deploy.execute({ service: 'web' }, context) as Promise<unknown>);
    await until(() => fake.held.size === 2, 'both tools/calls received');

    // A proxy cuts the first call's answer stream (its read timeout): that call is recorded as failed. Fine.
    fake.held.get('api')!.response.destroy();
    await expect(first).resolves.toEqual({ refused: expect.stringContaining('failed: Connection closed') });

    // The server finishes the second call and answers it, on its own intact stream.
    fake.answer('web');
    expect({ ran: fake.ran, second: await second }).toEqual({ ran: ['api', 'web'], second: { ran: expect.objectContaining({ text: 'deployed web' }) } });
  });
});
