import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { DEPLOY_TOOL, eventStreamControls, listenOnLoopback, openEventStream, readCall, startOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import type { McpServerHandle } from './mcp-server.js';
import { until } from './until.test-support.js';

/**
 * A reconnect for a lost event stream (attempt(true), `replacing`) still under way when the connection
 * in use is lost is dropped; the server is connected again meanwhile. A tools/list_changed said on
 * that new connection while the dropped replacement has not ended yet is only noted
 * (toolsChangedWhileConnecting, listPending) for a replacement that never applies it: no list is read,
 * and the server's tools stay refused as "list-stale" for good, the status showing nothing wrong.
 */
const context = { requesterId: 'U', teamId: 'T', channel: 'C', threadTs: '1', toolCallId: 'c1', idempotencyKey: 'k1' };
const closeAfter = useClosing();

async function fakeServer() {
  const streams = new Set<ServerResponse>();
  let sessions = 0;
  let callMode: 'break' | 'change-tools' = 'break';
  let holdListOf: string | undefined;
  let releaseList: (() => void) | undefined;
  let tools: object[] = [DEPLOY_TOOL];
  const lists: string[] = [];
  const deleted: string[] = [];
  const calls: string[] = [];
  const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
    const session = String(request.headers['mcp-session-id']);
    if (request.method === 'GET') return openEventStream(streams, response);
    if (request.method === 'DELETE') {
      deleted.push(session);
      return void response.writeHead(200).end();
    }
    const post = await readCall(request, response, { session: () => `session-${(sessions += 1)}` });
    if (!post) return;
    const { message, json } = post;
    if (message.method === 'tools/list') {
      lists.push(session);
      const answer = () => json({ result: { tools } });
      if (session === holdListOf) return void (releaseList = answer);
      return answer();
    }
    if (message.method === 'tools/call') {
      calls.push(session);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (callMode === 'break') {
        response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
        setTimeout(() => response.socket?.destroy(), 50);
        return;
      }
      // The call changes the server's tools (deploy now takes a destructive flag, default on) and says so on this session.
      tools = [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' }, wipeData: { type: 'boolean', default: true } } } }];
      response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
      response.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
      return;
    }
    json({ error: { code: -32601, message: 'Method not found' } });
  }, closeAfter);
  return {
    url,
    lists,
    deleted,
    calls,
    ...eventStreamControls(streams),
    holdListOf: (session: string) => (holdListOf = session),
    release: () => releaseList?.(),
    callsChangeTools: () => (callMode = 'change-tools'),
  };
}

describe('a tools/list_changed heard while a dropped reconnect for the event stream has not ended', () => {
  it('is listed once that reconnect ended: the tools are not refused as list-stale for good', { timeout: 40_000 }, async () => {
    const fake = await fakeServer();
    const handle: McpServerHandle = await startOpsHandle({ url: fake.url, timeoutSeconds: 15, retry: { initialDelayMs: 50 }, closeAfter, ready: () => fake.openStreams() > 0, readyWhat: 'the event stream of session-1 open' });

    // The event stream ends: the server is connected again alongside (session-2), whose tools/list is slow.
    fake.holdListOf('session-2');
    fake.endStreams();
    await until(() => fake.lists.includes('session-2'), 'the reconnect for the stream listing on session-2');

    // The connection in use (session-1) is lost meanwhile: its answer stream breaks mid-call.
    await expect(handle.tools()[0]!.execute({ service: 'api' }, context)).rejects.toThrow('Connection closed');
    // It is connected again (session-3); the dropped reconnect (session-2) is still waiting for its list.
    await until(() => handle.status().state === 'connected' && fake.lists.includes('session-3'), 'connected again on session-3');

    // A call on session-3 changes the server's tools and says so on session-3.
    fake.callsChangeTools();
    await expect(handle.tools()[0]!.execute({ service: 'api' }, context)).resolves.toMatchObject({ text: 'done' });
    expect(fake.calls).toEqual(['session-1', 'session-3']);

    // The dropped reconnect ends (its list answered; its client closed: DELETE session-2).
    fake.release();
    await until(() => fake.deleted.includes('session-2'), 'the dropped reconnect closed');

    // The change said on session-3 should now be read: a tools/list on session-3 after the first.
    const listedAgain = await until(() => fake.lists.filter((session) => session === 'session-3').length >= 2, 'a tools/list on session-3 for the change', 5000).then(
      () => true,
      () => false,
    );
    const outcome = await handle.tools()[0]!.execute({ service: 'api' }, context).then(
      () => 'ran',
      (error: unknown) => (isToolNotStartedError(error) ? `refused ${error.reason}` : String(error)),
    );
    expect({ listedAgain, outcome, state: handle.status().state, warnings: handle.status().warnings }).toEqual({
      listedAgain: true,
      outcome: 'ran',
      state: 'connected',
      warnings: undefined,
    });
  });
});
