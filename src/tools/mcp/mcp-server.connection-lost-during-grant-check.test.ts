import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { startStatelessServer, useClosing } from './http-mcp-fixture.test-support.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';

/**
 * Over HTTP `execute` awaits `context.assertHeld()` (for a call let through on a grant: a Redis read of the
 * grant, then the lease) between its own tools/list and tools/call (5c00621). The connection in use can be
 * lost meanwhile (another call's list or call meets a 5xx or a broken answer stream). Until 9321766, callTool
 * was then handed a closed client, which @ai-sdk/mcp refuses before anything is sent ("Attempted to send a
 * request from a closed client"), and that refusal was wrapped as `Error("… failed: …")`: the turn recorded
 * the call as run and failed (and, let through on a grant, as run without a card), though tools/call never
 * left the bot. Such a call is now refused as not run.
 */
const closeAfter = useClosing();

describe('an HTTP MCP call whose connection is lost while its grant is checked, after its list', () => {
  it('is recorded as not run (ToolNotStartedError): tools/call was never sent', { timeout: 30_000 }, async () => {
    const { server, held } = await startStatelessServer({ closeAfter });

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
