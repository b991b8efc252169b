import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { useEventStreamServers } from './event-stream-mcp-server.test-support.js';
import { until } from './until.test-support.js';

const connected = useEventStreamServers();
const context = { toolCallId: 'c1', idempotencyKey: 'k', teamId: 'T', channel: 'C', threadTs: '1', requesterId: 'U' } as never;

describe('an HTTP MCP server whose GET event stream ends', () => {
  it('still has its tool changes heard after the server (or a proxy) ended the event stream', { timeout: 30_000 }, async () => {
    const { fake, handle } = await connected();
    fake.endStreams();
    await until(() => fake.openStreams() === 0, 'the event stream ended');

    // The bot is still "connected" with no warning; it should open the stream again to hear list_changed.
    expect(handle.status()).toMatchObject({ state: 'connected' });
    expect(handle.status().warnings).toBeUndefined();
    await until(() => fake.openStreams() > 0, 'the event stream opened again', 15_000);
    fake.setTools([{ name: 'status_v2', inputSchema: { type: 'object', properties: {} } }]);
    await until(() => handle.tools().some((tool) => tool.name === 'ops.status_v2'), 'the changed tools read');
  });

  it('still has its tool changes heard after one reopening of a broken stream was answered 503', { timeout: 30_000 }, async () => {
    const { fake, handle } = await connected();
    const getsBefore = fake.gets();
    fake.answerNextGet(503);
    fake.breakStreams();
    // Barrier: the client tried to reopen the stream and was answered 503.
    await until(() => fake.gets() > getsBefore, 'the stream reopened once');

    await until(() => fake.openStreams() > 0, 'the event stream opened again', 15_000);
    fake.setTools([{ name: 'status_v2', inputSchema: { type: 'object', properties: {} } }]);
    await until(() => handle.tools().some((tool) => tool.name === 'ops.status_v2'), 'the changed tools read');
  });

  it('lets a call under way on the connection it replaces finish, and ends that session after it', { timeout: 30_000 }, async () => {
    const { fake, handle } = await connected();
    const status = handle.tools().find((tool) => tool.name === 'ops.status')!;
    const release = fake.holdNextCall();
    const first = status.execute!({}, context);
    await until(() => fake.calls().length > 0, 'the first call on the server');
    fake.endStreams();
    await until(() => fake.openStreams() > 0, 'the event stream opened again', 15_000);
    // Barrier: a call goes over the new session (the bot connected again and uses the new connection).
    for (let tries = 0; fake.calls().at(-1) !== 'session-2'; tries += 1) {
      if (tries > 500) throw new Error(`calls never went over the new session: ${fake.calls().join(', ')}`);
      await status.execute!({}, context).catch((error: unknown) => {
        if (!isToolNotStartedError(error)) throw error;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(fake.deleted()).toEqual([]);

    release();
    await expect(first).resolves.toMatchObject({ text: 'done' });
    await until(() => fake.deleted().includes('session-1'), 'the old session ended');
  });

  it('stays connected with a warning while the server refuses every event stream, and clears it once one opens', { timeout: 30_000 }, async () => {
    const { fake, handle } = await connected({ retry: { initialDelayMs: 20 } });
    fake.refuseGets(503);
    fake.endStreams();
    // Barrier: the second loss in a row (the reconnect's stream refused too) warns.
    await until(() => handle.status().warnings?.some((warning) => warning.code === 'mcp-event-stream-lost'), 'the warning');
    expect(handle.status()).toMatchObject({
      state: 'connected',
      warnings: [
        {
          code: 'mcp-event-stream-lost',
          message: 'MCP server ops: its event stream was answered HTTP 503, so a change of its tools may go unheard until it is open again (the tools offered may lag, but each call is checked against a tools/list made for it; connecting again in the background).',
        },
      ],
    });
    await expect(handle.tools()[0]!.execute!({}, context)).resolves.toMatchObject({ text: 'done' });

    fake.refuseGets(undefined);
    await until(() => fake.openStreams() > 0 && handle.status().warnings === undefined, 'the stream open again, without the warning', 15_000);
  });
});
