import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { DEPLOY_TOOL, listenOnLoopback, readCall, useClosing } from './http-mcp-fixture.test-support.js';
import { createMcpServer } from './mcp-server.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';

/**
 * capped-fetch.ts says a body past the cap "ends with an error; the call that waited for it fails with this
 * message" (mcp-server.test.ts proves it for an application/json answer). For an answer on an event stream
 * (text/event-stream, what most servers send for tools/call) the cap's error was once raised outside
 * watchAnswerStreams, so no error answer was made up for the request: the call waited out its whole timeout.
 */
const closeAfter = useClosing();

describe('an HTTP MCP call answered on an event stream past maxResponseBytes', () => {
  it('fails at once with why (as an application/json answer does), not after its timeout', { timeout: 30_000 }, async () => {
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      if (request.method !== 'POST') return void response.writeHead(405).end();
      const post = await readCall(request, response);
      if (!post) return;
      const { message, id, json } = post;
      if (message.method === 'tools/list') return json({ result: { tools: [DEPLOY_TOOL] } });
      if (message.method === 'tools/call') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(200_000) }] } })}\n\n`);
        return;
      }
      json({ error: { code: -32601, message: 'Method not found' } });
    }, closeAfter);
    const config = parseConfigFile(`mcpServers:\n  ops:\n    url: ${url}\n    timeoutSeconds: 4\n`, 'test.yml').mcpServers!.ops!;
    const handle = createMcpServer({
      name: 'ops', config, env: {}, logger: pino({ level: 'silent' }), problems: [], maxResponseBytes: 64 * 1024,
      onToolsChanged: () => {}, onProblem: () => {}, onRecovered: () => {},
    });
    closeAfter(() => handle.close());
    await handle.start();
    const started = Date.now();
    const result = await outcome(handle.tools()[0]!.execute({ service: 'web' }, context) as Promise<unknown>);
    expect({ result, waitedOutTimeout: Date.now() - started >= 4000 }).toEqual({
      result: { refused: expect.stringContaining('larger than 65536 bytes') },
      waitedOutTimeout: false,
    });
  });
});
