import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { useEventStreamServers } from './event-stream-mcp-server.test-support.js';
import { until } from './until.test-support.js';

const connected = useEventStreamServers();
const context = { toolCallId: 'c1', idempotencyKey: 'k', teamId: 'T', channel: 'C', threadTs: '1', requesterId: 'U' } as never;

describe('an HTTP MCP server that says its tools changed many times in a row', () => {
  it('is listed a few times, not once per notice', { timeout: 30_000 }, async () => {
    const { fake, handle } = await connected();
    const listsBefore = fake.lists();
    fake.spam(200);
    // The last notice, after the 200 on the same stream: its list offers status_v2.
    fake.setTools([{ name: 'status_v2', inputSchema: { type: 'object', properties: {} } }]);
    // Barrier: the list after the last notice was read and none is under way or waiting (the server's tools
    // are refused as not run until then; the fake answers a call it lets start with an error).
    const held = await until(() => handle.tools().find((tool) => tool.name === 'ops.status_v2'), 'the changed tools read');
    for (let tries = 0; ; tries += 1) {
      const refused = await held.execute!({}, context).then(
        () => false,
        (error: unknown) => isToolNotStartedError(error),
      );
      if (!refused) break;
      if (tries > 500) throw new Error('the tools are still refused');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Before the fix: one tools/list per notice, all at once (each answer up to 16 MiB held together).
    // Now: the one asked at the first notice, and one more for all that came while it was under way.
    expect(fake.lists() - listsBefore).toBeLessThanOrEqual(3);
  });
});
