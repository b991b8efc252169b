import { describe, expect, it } from 'vitest';
import { startStatelessServer, useClosing } from './http-mcp-fixture.test-support.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Every HTTP MCP call reads a tools/list of its own first (791bf51). A list that fails with a "connection
 * failure" (isConnectionFailure: any HTTP status >= 500, e.g. one 503 from a load balancer while a backend
 * drains) takes the connection as lost. Until 6533f1b that closed the client in use: every other call under
 * way on it, whose tools/call the server had received and was carrying out, had its answer stream aborted
 * and was recorded as failed, though it ran (and a grant or auto-approve let the model send it again). The
 * connection is now retired, closed once its calls ended.
 */
const closeAfter = useClosing();

describe("an HTTP MCP call under way when another call's own tools/list gets a 503", () => {
  it('still gets its answer (the server ran it)', { timeout: 30_000 }, async () => {
    // A slow tool: it is carried out, and answered once the test lets it.
    const slowTool = { finish: undefined as (() => void) | undefined };
    const beforeCall = () => new Promise<void>((resolve) => (slowTool.finish = resolve));
    const { server, held } = await startStatelessServer({ closeAfter, beforeCall });
    closeAfter(async () => slowTool.finish?.());

    // Call 1 (approved): its list is read, tools/call reaches the server, which works on it.
    const first = outcome(held.execute!({ name: 'staging' }, context));
    await until(() => server.ran.length === 1, "the first call's tools/call received");

    // Call 2 (another thread): its own tools/list gets one 503. It is refused as not run: fine.
    server.failNextList = true;
    const second = await outcome(held.execute!({ name: 'other' }, context));
    expect(second).toEqual({ refused: expect.any(String) });

    // The server finishes the first call and answers it.
    slowTool.finish!();
    const result = await first;
    expect({ ran: server.ran, first: result }).toEqual({ ran: [{ name: 'staging' }], first: { ran: expect.objectContaining({ text: 'dropped' }) } });
  });
});
