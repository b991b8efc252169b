import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createOpsHandle, eventStreamControls, listenOnLoopback, openEventStream, readCall, useClosing } from './http-mcp-fixture.test-support.js';
import { DELETE_DATABASE_TOOL, DELETE_DATABASE_WITH_BACKUPS, outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Since 791bf51 a call's tools/list updates the tools offered (cards, status, the definitions a
 * new turn holds, the fingerprint an approval is checked against at claim). `listAsked`/`listApplied` keep an
 * older list's answer from overwriting a newer one, but a connect's list (here the connection made alongside
 * to reopen a lost event stream) was numbered only when it was answered (`connected`), so it counted as newer
 * than a call's list asked, and applied, after it.
 */
const closeAfter = useClosing();

async function fakeServer() {
  const streams = new Set<ServerResponse>();
  let sessions = 0;
  let tools: object[] = [DELETE_DATABASE_TOOL];
  const held: { get?: () => void; list?: () => void; listAsked: boolean } = { listAsked: false };
  const control = { holdSession2: false };
  const lists: string[] = [];
  const calls: string[] = [];
  const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
    const session = String(request.headers['mcp-session-id']);
    if (request.method === 'GET') {
      // A proxy slow to answer the new session's GET (its event stream).
      if (control.holdSession2 && session === 'session-2') return void (held.get = () => openEventStream(streams, response));
      return openEventStream(streams, response);
    }
    if (request.method === 'DELETE') return void response.writeHead(200).end();
    const post = await readCall(request, response, { session: () => `session-${(sessions += 1)}` });
    if (!post) return;
    const { message, json } = post;
    if (message.method === 'tools/list') {
      lists.push(session);
      // The tools as they are when the server reads the request; its answer is slow to arrive.
      const answer = tools;
      if (control.holdSession2 && session === 'session-2' && !held.listAsked) {
        held.listAsked = true;
        await new Promise<void>((resolve) => (held.list = resolve));
      }
      return json({ result: { tools: answer } });
    }
    if (message.method === 'tools/call') {
      calls.push(session);
      return json({ result: { content: [{ type: 'text', text: 'dropped' }] } });
    }
    json({ error: { code: -32601, message: 'Method not found' } });
  }, closeAfter);
  return { url, lists, calls, held, control, ...eventStreamControls(streams), setTools: (next: object[]) => (tools = next) };
}

describe('the tools offered after a call read a newer list than a connect under way', () => {
  it('are not set back to the older definition when that connect is answered', { timeout: 30_000 }, async () => {
    const fake = await fakeServer();
    let toolsChanged = 0;
    const handle = createOpsHandle({ url: fake.url, retry: { initialDelayMs: 50 }, onToolsChanged: () => (toolsChanged += 1) });
    closeAfter(async () => {
      fake.held.list?.();
      fake.held.get?.();
      await handle.close();
    });
    await handle.start();
    await until(() => fake.openStreams() > 0, 'the event stream of session-1 open');
    const held = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;

    // The event stream ends; the bot connects again alongside (session-2). Its tools/list is read by the server now (v1) and answered late.
    fake.control.holdSession2 = true;
    fake.endStreams();
    await until(() => fake.held.listAsked, "session-2's tools/list read by the server");

    // Then the server is redeployed with delete_database dropping backups unless told not to (no stream open: unheard).
    fake.setTools([DELETE_DATABASE_WITH_BACKUPS]);
    // A call on the connection in use (session-1) reads a list of its own: it shows the change, which is applied.
    expect(await outcome(held.execute!({ name: 'staging' }, context))).toEqual({ refused: 'not-offered' });
    const afterCall = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    expect(JSON.stringify(afterCall.inputSchema)).toContain('keepBackups');
    const changesBefore = toolsChanged;

    // session-2's list (read before the redeploy) arrives: the connection swaps in.
    fake.held.list!();
    await until(() => toolsChanged > changesBefore, 'session-2 connected and its list applied');

    // The server offers delete_database with keepBackups; cards, status and the definition a new turn holds must say so.
    const offered = handle.tools().find((tool) => tool.name === 'ops.delete_database')!;
    expect({ offeredHasKeepBackups: JSON.stringify(offered.inputSchema).includes('keepBackups'), calls: fake.calls }).toEqual({ offeredHasKeepBackups: true, calls: [] });
  });
});
