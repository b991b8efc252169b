import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { GrantNoLongerHoldsError } from '../../agent/revoked-grant.js';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { startStatelessServer, useClosing } from './http-mcp-fixture.test-support.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Over HTTP a call waits for a tools/list of its own between the turn's last checks (grant, lease, the
 * executing marker) and tools/call (791bf51). What happens to the call while it waits there.
 * A stateless server (GET 405) whose tools/list the test holds (`hold`) until it releases it.
 */
const closeAfter = useClosing();

async function heldListServer() {
  const holding = {
    /** tools/list requests the server received and is holding. */
    held: 0,
    /** tools/list requests the client gave up on (the request closed before it was answered). */
    abandoned: 0,
    release: undefined as (() => void) | undefined,
    holding: false,
  };
  let gate = Promise.resolve();
  const beforeList = async (response: ServerResponse) => {
    if (!holding.holding) return;
    holding.held += 1;
    response.on('close', () => {
      if (!response.writableEnded) holding.abandoned += 1;
    });
    await gate;
  };
  const { server: stateless, held } = await startStatelessServer({ closeAfter, beforeList });
  const server = Object.assign(holding, stateless);
  closeAfter(async () => server.release?.());
  const hold = () => {
    server.holding = true;
    gate = new Promise<void>((resolve) => (server.release = resolve));
  };
  return { server, held, hold };
}

describe('an HTTP MCP call while its own tools/list is under way', () => {
  it('is recorded as not run (ToolNotStartedError) when the turn is stopped while it waits for its list: tools/call was never sent', { timeout: 30_000 }, async () => {
    const { server, held, hold } = await heldListServer();
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
    const { server, held, hold } = await heldListServer();
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
    const { server, held, hold } = await heldListServer();
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
    const { server, held } = await heldListServer();
    const stop = new AbortController();
    // The last check before tools/call (the grant's, the lease's) is where the turn is stopped: the list was read, nothing was sent.
    const assertHeld = async () => stop.abort(new Error('the turn failed'));
    const result = await outcome(held.execute!({ name: 'staging' }, { ...(context as object), abortSignal: stop.signal, assertHeld } as never));
    expect({ ran: server.ran, result }).toEqual({ ran: [], result: { refused: 'aborted' } });
  });
});
