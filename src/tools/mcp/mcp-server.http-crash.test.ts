import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * An MCP server over Streamable HTTP that answers tools/call with an event stream (as the official
 * SDKs do by default) and crashes (or is restarted, or a proxy cuts the connection) before the
 * result event. @ai-sdk/mcp's transport reports the broken stream only to onerror and never fails
 * the pending request: before the fix the call waited for its whole `timeoutSeconds` (default 60,
 * up to 3600) and then said "Request timed out", and the server was not seen as gone (a timeout is
 * not a connection failure), so the next call went to it as well.
 */
const logger = pino({ level: 'silent' });
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call_1', idempotencyKey: 'k1' };
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()!();
});

async function sseServerThatDiesMidCall() {
  const calls: string[] = [];
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string; params?: any };
    if (message.id === undefined) return void response.writeHead(202).end();
    const json = (body: object) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...body }));
    if (message.method === 'initialize') return json({ result: { protocolVersion: message.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'sse', version: '1' } } });
    if (message.method === 'tools/list') return json({ result: { tools: [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } }] } });
    if (message.method === 'tools/call') {
      calls.push(String(message.params?.name));
      // The stream starts (a progress notification), then the process dies: the socket is cut.
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
      setTimeout(() => response.socket?.destroy(), 100);
      return;
    }
    json({ error: { code: -32601, message: 'Method not found' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, calls };
}

describe('an HTTP MCP server that dies in the middle of a call', () => {
  it('fails the call with a closed connection, not with "timed out"; it is sent once and the server counts as gone', { timeout: 60_000 }, async () => {
    const fake = await sseServerThatDiesMidCall();
    // Longer than the cut takes by far: before the fix the call ended only here, "Request timed out after 20000ms".
    const config = parseConfigFile(`mcpServers:\n  ops:\n    url: ${fake.url}\n    timeoutSeconds: 20\n`, 'test.yml').mcpServers!.ops!;
    const problems: string[] = [];
    const handle: McpServerHandle = createMcpServer({ name: 'ops', config, env: {}, logger, problems: [], onToolsChanged: () => {}, onProblem: (message) => problems.push(message), onRecovered: () => {}, retry: { initialDelayMs: 60_000 } });
    closing.push(() => handle.close());
    await handle.start();
    expect(handle.status().state).toBe('connected');

    const outcome = await handle.tools()[0]!.execute({ service: 'api' }, context).then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    expect(outcome).toBe('ops.deploy failed: Connection closed');
    // Not sent again: it may have run (the turn tells the model it may or may not have completed).
    expect(fake.calls).toEqual(['deploy']);
    expect(handle.status()).toMatchObject({ state: 'unavailable', error: expect.stringMatching(/connection broke while it was answering/) });
    expect(problems).toEqual([expect.stringMatching(/^MCP server ops stopped: the connection broke while it was answering/)]);
    // The next call is not sent to the server that is gone.
    await expect(handle.tools()[0]!.execute({ service: 'api' }, context)).rejects.toThrow(/MCP server ops is not available .*ops\.deploy did not run/);
    expect(fake.calls).toEqual(['deploy']);
  });
});
