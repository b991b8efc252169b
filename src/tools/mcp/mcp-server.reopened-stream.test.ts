import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { useEventStreamServers } from './event-stream-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * A GET event stream that broke is reopened by @ai-sdk/mcp itself (1 s later); the keeper's `opened()`
 * cancelled its reconnect, and nothing listed the tools again. A tools/list_changed the server said while
 * no stream was open (a server without an event store drops it, as this fake does) was lost for good: the
 * old definitions kept running on the changed tool, the status clean. When the stream is lost for good
 * instead (a clean end), the reconnect lists the tools anew, so the same change is read (control).
 */
const connected = useEventStreamServers();
const context = { toolCallId: 'c1', idempotencyKey: 'k', teamId: 'T', channel: 'C', threadTs: '1', requesterId: 'U' } as never;
const changed = [{ name: 'status', inputSchema: { type: 'object', properties: { wipeData: { type: 'boolean', default: true } } } }];

async function callHeld(status: { execute?: (input: never, context: never) => PromiseLike<unknown> }) {
  return status.execute!({} as never, context).then(
    () => 'ran',
    (error: unknown) => (isToolNotStartedError(error) ? `refused ${error.reason}` : String(error)),
  );
}

describe('a tools/list_changed said while the event stream was broken', () => {
  it('is not lost once the client reopened the stream itself: the old definition does not keep running', { timeout: 30_000 }, async () => {
    const { fake, handle } = await connected();
    const status = handle.tools().find((tool) => tool.name === 'ops.status')!;
    const listsBefore = fake.lists();
    fake.breakStreams();
    await until(() => fake.openStreams() === 0, 'the event stream broken');
    // The server's tools change while no stream is open: its notification reaches no one.
    fake.setTools(changed);
    await until(() => fake.openStreams() > 0, 'the client reopened the stream itself', 10_000);
    // Barrier (bounded): the bot lists the tools again after the gap.
    const listedAgain = await until(() => fake.lists() > listsBefore, 'a tools/list after the gap', 8000).then(
      () => true,
      () => false,
    );
    const callsBefore = fake.calls().length;
    const outcome = await callHeld(status);
    expect({ listedAgain, outcome, sent: fake.calls().length - callsBefore, offered: handle.tools()[0]!.inputSchema }).toMatchObject({
      listedAgain: true,
      outcome: expect.stringMatching(/^refused /),
      sent: 0,
    });
  });

  it('control: after a clean end (lost for good) the reconnect lists the tools anew and the old definition is refused', { timeout: 30_000 }, async () => {
    const { fake, handle } = await connected({ retry: { initialDelayMs: 50 } });
    const status = handle.tools().find((tool) => tool.name === 'ops.status')!;
    fake.endStreams();
    await until(() => fake.openStreams() === 0, 'the event stream ended');
    fake.setTools(changed);
    // Barrier: the bot offers the changed tool (a list answered after the change, applied; a list merely
    // asked for left the call racing the swap to the new connection).
    await until(() => JSON.stringify(handle.tools().find((tool) => tool.name === 'ops.status')?.inputSchema).includes('wipeData') && handle.status().warnings === undefined, 'the changed tool offered', 10_000);
    const callsBefore = fake.calls().length;
    expect({ outcome: await callHeld(status), sent: fake.calls().length - callsBefore }).toMatchObject({ outcome: expect.stringMatching(/^refused /), sent: 0 });
  });
});
