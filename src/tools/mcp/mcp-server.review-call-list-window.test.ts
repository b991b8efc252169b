import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { GrantNoLongerHoldsError } from '../../agent/revoked-grant.js';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { answerJson, INITIALIZE_RESULT, listenOnLoopback, readMessage, startOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import { DELETE_DATABASE_TOOL, outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Review of 791bf51: over HTTP a call now waits for a tools/list of its own between the turn's last checks
 * (grant, lease, the executing marker) and tools/call. What happens to the call while it waits there.
 * A stateless server (GET 405) whose tools/list the test holds until it releases it.
 */
const closeAfter = useClosing();

function heldListServer() {
  const server = {
    ran: [] as unknown[],
    /** tools/list requests the server received and is holding. */
    held: 0,
    /** tools/list requests the client gave up on (the request closed before it was answered). */
    abandoned: 0,
    release: undefined as (() => void) | undefined,
    holding: false,
  };
  let gate = Promise.resolve();
  const handler = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const message = await readMessage<{ id?: number; method: string; params?: { arguments?: unknown } }>(request);
    if (message.id === undefined) return void response.writeHead(202).end();
    if (message.method === 'initialize') return answerJson(response, message.id, { result: INITIALIZE_RESULT });
    if (message.method === 'tools/list') {
      if (server.holding) {
        server.held += 1;
        response.on('close', () => {
          if (!response.writableEnded) server.abandoned += 1;
        });
        await gate;
      }
      if (response.destroyed) return;
      return answerJson(response, message.id, { result: { tools: [DELETE_DATABASE_TOOL] } });
    }
    if (message.method === 'tools/call') {
      server.ran.push(message.params?.arguments);
      return answerJson(response, message.id, { result: { content: [{ type: 'text', text: 'dropped' }] } });
    }
    return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
  };
  const hold = () => {
    server.holding = true;
    gate = new Promise<void>((resolve) => (server.release = resolve));
  };
  return { server, handler, hold };
}

describe("an HTTP MCP call while its own tools/list is under way (review of 791bf51)", () => {
  it('is recorded as not run (ToolNotStartedError) when the turn is stopped while it waits for its list: tools/call was never sent', { timeout: 30_000 }, async () => {
    const { server, handler, hold } = heldListServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    closeAfter(async () => server.release?.());
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    hold();
    const stop = new AbortController();
    const call = held.execute!({ name: 'staging' }, { ...(context as object), abortSignal: stop.signal } as never) as Promise<unknown>;
    await until(() => server.held === 1, "the call's tools/list asked");
    // The turn fails (another call's marker write failed, the model stream broke, the bot stops): run-turn aborts the calls under way.
    stop.abort(new Error('the turn failed'));
    // The list is answered after all (the server does not know the client stopped caring).
    server.release!();
    const error = await call.then(() => undefined, (thrown: unknown) => thrown);
    // Nothing reached the server: the record must say "not run" (a ToolNotStartedError, which createTurnTools
    // records as not started), as for every other refusal before tools/call; any other error is recorded as ran and failed.
    expect(server.ran).toEqual([]);
    expect({ notStarted: isToolNotStartedError(error), message: String(error) }).toEqual({ notStarted: true, message: expect.any(String) });
  });

  it('stops waiting for its list when the turn is stopped (the turn failure waits for the calls under way)', { timeout: 30_000 }, async () => {
    const { server, handler, hold } = heldListServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    closeAfter(async () => server.release?.());
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    hold();
    const stop = new AbortController();
    const call = outcome(held.execute!({ name: 'staging' }, { ...(context as object), abortSignal: stop.signal } as never));
    await until(() => server.held === 1, "the call's tools/list asked");
    const stoppedAt = Date.now();
    stop.abort(new Error('the turn failed'));
    // Never released by the test: the call ends only when it gives up on its list (by the abort, or the 20 s connectTimeoutSeconds).
    await call;
    const waited = Date.now() - stoppedAt;
    expect({ ran: server.ran, waitedUnder5s: waited < 5_000 }).toEqual({ ran: [], waitedUnder5s: true });
  });

  it('does not run when the grant that let it through is revoked (or the thread lost) while it waits for its list', { timeout: 30_000 }, async () => {
    const { server, handler, hold } = heldListServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    closeAfter(async () => server.release?.());
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    hold();
    let revoked = false;
    // What createTurnTools hands a tool let through on a grant: the grant's and the lease's check, to make last before the start.
    const assertHeld = async () => {
      if (revoked) throw new GrantNoLongerHoldsError({ grantId: 'g1', toolName: 'ops.delete_database' });
    };
    const call = outcome(held.execute!({ name: 'staging' }, { ...(context as object), assertHeld } as never));
    await until(() => server.held === 1, "the call's tools/list asked");
    // Carol clicks Revoke on /countersign grants while the list is under way (it can take up to connectTimeoutSeconds, 20 s).
    revoked = true;
    server.release!();
    const result = await call;
    expect({ ran: server.ran, result }).toEqual({ ran: [], result: { refused: expect.stringContaining('GrantNoLongerHoldsError') } });
  });

  it('is recorded as not run (reason aborted) when the turn is stopped after its list was read, before tools/call is sent', { timeout: 30_000 }, async () => {
    const { server, handler } = heldListServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    const stop = new AbortController();
    // The last check before tools/call (the grant's, the lease's) is where the turn is stopped: the list was read, nothing was sent.
    const assertHeld = async () => stop.abort(new Error('the turn failed'));
    const result = await outcome(held.execute!({ name: 'staging' }, { ...(context as object), abortSignal: stop.signal, assertHeld } as never));
    expect({ ran: server.ran, result }).toEqual({ ran: [], result: { refused: 'aborted' } });
  });
});
