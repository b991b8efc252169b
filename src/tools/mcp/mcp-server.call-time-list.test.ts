import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answerJson, createOpsHandle, INITIALIZE_RESULT, listenOnLoopback, openEventStream, readMessage, startOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import { DELETE_DATABASE_TOOL, DELETE_DATABASE_WITH_BACKUPS, outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Over HTTP, each call is checked against a tools/list asked for it (not the cached list, which only a
 * change heard refreshes): these are the rest of that rule. A server without an event stream (GET
 * answered 405), whose tools the test sets and whose tools/list it can fail or hold.
 */
const closeAfter = useClosing();

function statelessServer() {
  const server = {
    tools: [DELETE_DATABASE_TOOL] as object[],
    /** How many tools/list it answered (or failed), and the tool calls it ran. */
    lists: 0,
    ran: [] as unknown[],
    failLists: false,
    /** When set, a tools/list waits for it (its answer is the tools as they were when it was asked). */
    holdLists: undefined as Promise<void> | undefined,
    held: 0,
  };
  const handler = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const message = await readMessage<{ id?: number; method: string; params?: { arguments?: unknown } }>(request);
    if (message.id === undefined) return void response.writeHead(202).end();
    if (message.method === 'initialize') return answerJson(response, message.id, { result: INITIALIZE_RESULT });
    if (message.method === 'tools/list') {
      server.lists += 1;
      if (server.failLists) return answerJson(response, message.id, { error: { code: -32603, message: 'tool registry unavailable' } });
      const tools = server.tools;
      if (server.holdLists) {
        server.held += 1;
        await server.holdLists;
      }
      return answerJson(response, message.id, { result: { tools } });
    }
    if (message.method === 'tools/call') {
      server.ran.push(message.params?.arguments);
      return answerJson(response, message.id, { result: { content: [{ type: 'text', text: 'dropped' }] } });
    }
    return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
  };
  return { server, handler };
}

describe('an HTTP MCP call, checked against a tools/list asked for it', () => {
  it('runs an unchanged tool, after one tools/list of its own, and leaves the tools offered as they were', { timeout: 30_000 }, async () => {
    const { server, handler } = statelessServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    const listsAtConnect = server.lists;
    expect(await outcome(held.execute!({ name: 'staging' }, context))).toEqual({ ran: expect.objectContaining({ text: 'dropped' }) });
    expect({ lists: server.lists - listsAtConnect, ran: server.ran, offered: handle.tools() }).toEqual({ lists: 1, ran: [{ name: 'staging' }], offered: [held] });
  });

  it('refuses the call as not run when that list cannot be read (fail closed), never on the cached list', { timeout: 30_000 }, async () => {
    const { server, handler } = statelessServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    server.failLists = true;
    const refusal = held.execute!({ name: 'staging' }, context);
    await expect(refusal).rejects.toThrow(/MCP server ops's tool list, read to check that ops\.delete_database is still the tool this call was made for, could not be read \(.*tool registry unavailable.*\); ops\.delete_database did not run\./);
    expect({ result: await outcome(refusal), ran: server.ran, state: handle.status().state }).toEqual({ result: { refused: 'list-stale' }, ran: [], state: 'connected' });
  });

  it('applies a change that list shows to the tools offered (cards and status follow)', { timeout: 30_000 }, async () => {
    const { server, handler } = statelessServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    server.tools = [DELETE_DATABASE_WITH_BACKUPS];
    expect(await outcome(held.execute!({ name: 'staging' }, context))).toEqual({ refused: 'not-offered' });
    const offered = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    expect(offered).not.toBe(held);
    expect(JSON.stringify(offered.inputSchema)).toContain('keepBackups');
    // The definition now offered runs.
    expect(await outcome(offered.execute!({ name: 'staging', keepBackups: true }, context))).toEqual({ ran: expect.objectContaining({ text: 'dropped' }) });
    expect(server.ran).toEqual([{ name: 'staging', keepBackups: true }]);
  });

  it('never checks a call against a list asked before the call was: one asked while a list is under way waits for the next', { timeout: 30_000 }, async () => {
    const { server, handler } = statelessServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const handle = await startOpsHandle({ url, closeAfter });
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    let release!: () => void;
    server.holdLists = new Promise<void>((resolve) => (release = resolve));
    const first = outcome(held.execute!({ name: 'first' }, context));
    // Barrier: the first call's list was asked (and is answered with the tools as they are now).
    await until(() => server.held === 1, "the first call's tools/list asked");
    server.tools = [DELETE_DATABASE_WITH_BACKUPS];
    const second = outcome(held.execute!({ name: 'second' }, { ...(context as object), toolCallId: 'c2' } as never));
    const third = outcome(held.execute!({ name: 'third' }, { ...(context as object), toolCallId: 'c3' } as never));
    release();
    expect(await Promise.all([first, second, third])).toEqual([{ ran: expect.objectContaining({ text: 'dropped' }) }, { refused: 'not-offered' }, { refused: 'not-offered' }]);
    // The two asked while the first list was under way shared one list.
    expect({ ran: server.ran, held: server.held }).toEqual({ ran: [{ name: 'first' }], held: 2 });
  });
});

describe("a call's tools/list asked while the list for a change the server said is under way", () => {
  it('does not leave the tools refused once that list is read', { timeout: 30_000 }, async () => {
    const streams = new Set<ServerResponse>();
    let holdNextList = false;
    let releaseList: (() => void) | undefined;
    const ran: unknown[] = [];
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      if (request.method === 'GET') return openEventStream(streams, response);
      if (request.method === 'DELETE') return void response.writeHead(200).end();
      const message = await readMessage<{ id?: number; method: string; params?: { arguments?: unknown } }>(request);
      if (message.id === undefined) return void response.writeHead(202).end();
      if (message.method === 'initialize') return answerJson(response, message.id, { result: INITIALIZE_RESULT }, { 'mcp-session-id': 'session-1' });
      if (message.method === 'tools/list') {
        if (holdNextList) {
          holdNextList = false;
          await new Promise<void>((resolve) => (releaseList = resolve));
        }
        return answerJson(response, message.id, { result: { tools: [DELETE_DATABASE_TOOL] } });
      }
      if (message.method === 'tools/call') {
        ran.push(message.params?.arguments);
        return answerJson(response, message.id, { result: { content: [{ type: 'text', text: 'dropped' }] } });
      }
      return answerJson(response, message.id, { error: { code: -32601, message: 'Method not found' } });
    }, closeAfter);
    let toolsChanged = 0;
    const handle = createOpsHandle({ url, onToolsChanged: () => (toolsChanged += 1) });
    closeAfter(async () => {
      releaseList?.();
      await handle.close();
    });
    await handle.start();
    await until(() => streams.size > 0, 'the event stream open');
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;

    // The server says its tools changed; the list that calls for is held.
    holdNextList = true;
    for (const stream of streams) stream.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
    await until(() => releaseList, 'the tools/list for the change asked');
    // Meanwhile a call: refused, the change said not read yet (its own list answered at once).
    expect(await outcome(held.execute!({ name: 'first' }, context))).toEqual({ refused: 'list-stale' });

    // The list for the change is read (the same tools): the tools run again.
    const changedBefore = toolsChanged;
    releaseList!();
    await until(() => toolsChanged > changedBefore, 'the list for the change applied');
    expect(await outcome(held.execute!({ name: 'second' }, { ...(context as object), toolCallId: 'c2' } as never))).toEqual({ ran: expect.objectContaining({ text: 'dropped' }) });
    expect(ran).toEqual([{ name: 'second' }]);
  });
});
