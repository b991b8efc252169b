import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { answerJson, INITIALIZE_RESULT, listenOnLoopback, readMessage, startOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import { DELETE_DATABASE_TOOL, outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';

/**
 * Review of 5c00621: over HTTP `execute` now awaits `context.assertHeld()` (for a call let through on a grant: a
 * Redis read of the grant, then the lease) between its own tools/list and tools/call. The connection in use can
 * be lost meanwhile (another call's list or call meets a 5xx / a broken answer stream: `lost()` closes the
 * client). callTool on the closed client is refused by @ai-sdk/mcp before anything is sent ("Attempted to send a
 * request from a closed client"), but that refusal is wrapped as `Error("… failed: …")`: the turn records the call
 * as run and failed (and, let through on a grant, as run without a card), though tools/call never left the bot.
 */
const closeAfter = useClosing();

describe('an HTTP MCP call whose connection is lost while its grant is checked, after its list', () => {
  it('is recorded as not run (ToolNotStartedError): tools/call was never sent', { timeout: 30_000 }, async () => {
    const server = { ran: [] as unknown[], failNextList: false };
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
        return answerJson(response, message.id, { result: { content: [{ type: 'text', text: 'dropped' }] } });
      }
      return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
    };
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;

    // The grant's check (a Redis round trip): meanwhile another thread's call meets a 503 on its list, and the
    // connection in use is taken as lost (its client closed).
    const assertHeld = async () => {
      server.failNextList = true;
      await outcome(held.execute!({ name: 'other' }, context));
    };
    const error = await (held.execute!({ name: 'staging' }, { ...(context as object), assertHeld } as never) as Promise<unknown>).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(server.ran).toEqual([]);
    expect({ notStarted: isToolNotStartedError(error), message: String(error) }).toEqual({ notStarted: true, message: expect.any(String) });
  });
});
