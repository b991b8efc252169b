import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createOpsHandle, INITIALIZE_RESULT, listenOnLoopback, readMessage, useClosing } from './http-mcp-fixture.test-support.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * watchAnswerStreams (41d99b8) took the JSON-RPC `id` of ANY POST body, including a response the client
 * POSTs to a server's own request (its answer to a server `ping`, or its refusal of an elicitation), whose
 * id is in the SERVER's id space. When that POST's event stream broke, the made-up "Connection closed" error
 * answer carried the server's id, and @ai-sdk/mcp matched it (Number(id)) to the CLIENT's own request of the
 * same number: an unrelated tools/call under way, which the server had received and was carrying out, was
 * recorded as "ran and failed: Connection closed" (the model, told it failed, could send it again: it ran
 * twice). So it was until 6d400f6: a POST that is not a request gets no made-up answer.
 */
const closeAfter = useClosing();

describe("an HTTP MCP call under way when the stream answering the client's response to a server ping breaks", () => {
  it('still gets its answer (the server ran it)', { timeout: 30_000 }, async () => {
    let held: { response: ServerResponse; id: number | string } | undefined;
    const ran: string[] = [];
    let pingAnswerStreams = 0;
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      if (request.method !== 'POST') return void response.writeHead(405).end();
      const message = await readMessage<{ id?: number | string; method?: string; params?: any; result?: unknown }>(request);
      const json = (body: object) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...body }));
      };
      if (message.id === undefined) return void response.writeHead(202).end();
      if (message.method === undefined) {
        // The client's answer to the server's ping: answered with an event stream that a proxy then cuts.
        pingAnswerStreams += 1;
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(': ok\n\n');
        setTimeout(() => response.destroy(), 50);
        return;
      }
      if (message.method === 'initialize') return json({ result: INITIALIZE_RESULT });
      if (message.method === 'tools/list') return json({ result: { tools: [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } }] } });
      if (message.method === 'tools/call') {
        ran.push(String(message.params?.arguments?.service));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        // The server pings the client on the call's stream; its own request ids count from 0 like the client's,
        // so its id may well equal the number of a request of the client's under way (here: this very call's).
        response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, method: 'ping' })}\n\n`);
        held = { response, id: message.id };
        return;
      }
      json({ error: { code: -32601, message: 'Method not found' } });
    }, closeAfter);
    const problems: string[] = [];
    const handle = createOpsHandle({ url, timeoutSeconds: 15, onProblem: (message) => problems.push(message) });
    closeAfter(() => handle.close());
    await handle.start();
    const deploy = handle.tools()[0]!;

    const call = outcome(deploy.execute({ service: 'web' }, context) as Promise<unknown>);
    await until(() => held !== undefined && pingAnswerStreams === 1, 'tools/call received and the ping answered');
    // The ping answer's stream breaks (the connection is taken as lost: its calls under way go on); then the
    // server finishes the call and answers it on its own intact stream.
    await until(() => problems.length > 0, 'the broken stream reported');
    held!.response.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: held!.id, result: { content: [{ type: 'text', text: 'deployed web' }] } })}\n\n`);
    expect({ ran, call: await call }).toEqual({ ran: ['web'], call: { ran: expect.objectContaining({ text: 'deployed web' }) } });
  });
});
