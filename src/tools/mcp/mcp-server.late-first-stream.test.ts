import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { eventStreamControls, INITIALIZE_RESULT, listenOnLoopback, openEventStream, readRequest, startOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import { until } from './until.test-support.js';

/**
 * A tools change said after a connection's tools/list was answered and before its event stream opened is
 * not lost. eac686b had a replacement connection's own tools/list cover the gap its first stream leaves,
 * but the list covers it only up to the moment it is answered. The replacement's GET event stream opens
 * on its own schedule (sent with the session after initialize, concurrently with the tools/list; a proxy
 * can be slow to answer it): a tools/list_changed said between the two reached no one (a server without
 * an event store drops it), and nothing listed again, so the held (old) definition kept running on the
 * redefined tool. So it was until 2eb99e7.
 */
const context = { requesterId: 'U', teamId: 'T', channel: 'C', threadTs: '1', toolCallId: 'c1', idempotencyKey: 'k1' };
const closeAfter = useClosing();

async function fakeServer() {
  const streams = new Set<ServerResponse>();
  let sessions = 0;
  let holdGetOf: string | undefined;
  let releaseGet: (() => void) | undefined;
  let tools: object[] = [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } }];
  const lists: string[] = [];
  const calls: string[] = [];
  const deleted: string[] = [];
  const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
    const session = request.headers['mcp-session-id'] as string | undefined;
    if (request.method === 'GET') {
      // As the official SDKs: a GET without a session is answered 400.
      if (!session) return void response.writeHead(400).end('no session');
      if (session === holdGetOf) return void (releaseGet = () => openEventStream(streams, response));
      return openEventStream(streams, response);
    }
    if (request.method === 'DELETE') {
      deleted.push(String(session));
      return void response.writeHead(200).end();
    }
    const post = await readRequest<{ id?: number; method: string; params?: any }>(request, response);
    if (!post) return;
    const { message, json } = post;
    if (message.method === 'initialize') return json({ result: INITIALIZE_RESULT }, { 'mcp-session-id': `session-${(sessions += 1)}` });
    if (message.method === 'tools/list') {
      lists.push(String(session));
      return json({ result: { tools } });
    }
    if (message.method === 'tools/call') {
      calls.push(String(session));
      return json({ result: { content: [{ type: 'text', text: 'done' }] } });
    }
    json({ error: { code: -32601, message: 'Method not found' } });
  }, closeAfter);
  return {
    url,
    lists,
    calls,
    deleted,
    ...eventStreamControls(streams),
    holdGetOf: (session: string) => (holdGetOf = session),
    releaseGet: () => releaseGet?.(),
    getHeld: () => releaseGet !== undefined,
    /** The tools change; said on every event stream open now (none of session-2's yet). */
    changeTools: () => {
      tools = [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' }, wipeData: { type: 'boolean', default: true } } } }];
      for (const stream of streams) stream.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
    },
  };
}

describe("a replacement connection's event stream that opens after its tools/list was answered", () => {
  it('a change said between the two is not lost: the held definition does not run on the redefined tool', { timeout: 40_000 }, async () => {
    const fake = await fakeServer();
    const handle = await startOpsHandle({ url: fake.url, timeoutSeconds: 15, retry: { initialDelayMs: 50 }, closeAfter, ready: () => fake.openStreams() > 0, readyWhat: 'the event stream of session-1 open' });
    const deploy = handle.tools()[0]!;

    // session-1's stream ends (lost for good): the server is connected again alongside (session-2), whose GET is slow to open.
    fake.holdGetOf('session-2');
    fake.endStreams();
    // Barrier: session-2 listed the (unchanged) tools and is in use; session-1 (no call under way) was closed.
    await until(() => fake.lists.includes('session-2') && fake.deleted.includes('session-1') && fake.getHeld(), 'session-2 in use, its GET held');
    expect(fake.openStreams()).toBe(0);

    // The server's tools change now: no stream is open to say so on.
    fake.changeTools();
    fake.releaseGet();
    await until(() => fake.openStreams() > 0, "session-2's event stream open");
    const listsBefore = fake.lists.length;
    // Barrier (bounded, as mcp-server.reopened-stream.test.ts): the bot lists the tools again after the gap.
    const listedAgain = await until(() => fake.lists.length > listsBefore, 'a tools/list after the stream opened', 5000).then(
      () => true,
      () => false,
    );
    const callsBefore = fake.calls.length;
    const outcome = await deploy.execute({ service: 'api' }, context as never).then(
      () => 'ran',
      (error: unknown) => (isToolNotStartedError(error) ? `refused ${error.reason}` : String(error)),
    );
    expect({ listedAgain, outcome, sent: fake.calls.length - callsBefore }).toMatchObject({ outcome: expect.stringMatching(/^refused /), sent: 0 });
  });
});

describe("a first connection's event stream that opens while its tools/list is under way", () => {
  it('a change said before it opened is not lost: the connect lists again before its tools are offered', { timeout: 40_000 }, async () => {
    const streams = new Set<ServerResponse>();
    const lists: string[] = [];
    const oldTools = [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } }];
    const newTools = [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' }, wipeData: { type: 'boolean', default: true } } } }];
    let tools = oldTools;
    let releaseGet: (() => void) | undefined;
    let pinged = false;
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      const session = request.headers['mcp-session-id'] as string | undefined;
      if (request.method === 'GET') {
        if (!session) return void response.writeHead(400).end('no session');
        // Held until the tools/list below is read: the stream opens while the list is under way. A ping is
        // sent on it: the client reads the stream (and answers) only once the bot's fetch gave it the response.
        return void (releaseGet = () => {
          openEventStream(streams, response);
          response.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 'ping-1', method: 'ping' })}\n\n`);
        });
      }
      if (request.method === 'DELETE') return void response.writeHead(200).end();
      const post = await readRequest<{ id?: number | string; method?: string }>(request, response);
      if (!post) return;
      const { message, id, json } = post;
      // The client's answer to the ping: the bot read the stream's headers (and told it open) before this.
      if (message.method === undefined) {
        if (id === 'ping-1') pinged = true;
        return void response.writeHead(202).end();
      }
      if (message.method === 'initialize') return json({ result: INITIALIZE_RESULT }, { 'mcp-session-id': 'session-1' });
      if (message.method === 'tools/list') {
        lists.push(String(session));
        const answer = tools;
        if (lists.length === 1) {
          // The list is read (the old tools), then the tools change with no stream open to say so on (dropped),
          // then the stream opens; the list is answered after that.
          await until(() => releaseGet !== undefined, 'the GET of session-1');
          tools = newTools;
          releaseGet!();
          await until(() => pinged, 'the ping on the event stream of session-1 answered');
        }
        return json({ result: { tools: answer } });
      }
      if (message.method === 'tools/call') return json({ result: { content: [{ type: 'text', text: 'done' }] } });
      json({ error: { code: -32601, message: 'Method not found' } });
    }, closeAfter);
    const handle = await startOpsHandle({ url, timeoutSeconds: 15, closeAfter });

    const deploy = handle.tools()[0]!;
    const offered = Object.keys((deploy.inputSchema as { jsonSchema: { properties: object } }).jsonSchema.properties);
    expect({ lists: lists.length, offered }).toEqual({ lists: 2, offered: ['service', 'wipeData'] });
    expect(streams.size).toBe(1);
  });
});

describe('a server that offers no event stream (its GET answered 405)', () => {
  it('is listed once per connect, and its tools run', { timeout: 40_000 }, async () => {
    const lists: string[] = [];
    let getsAnswered = 0;
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      const session = request.headers['mcp-session-id'] as string | undefined;
      if (request.method === 'GET') {
        if (session) getsAnswered += 1;
        return void response.writeHead(405).end();
      }
      if (request.method === 'DELETE') return void response.writeHead(200).end();
      const post = await readRequest<{ id?: number; method: string }>(request, response);
      if (!post) return;
      const { message, json } = post;
      if (message.method === 'initialize') return json({ result: INITIALIZE_RESULT }, { 'mcp-session-id': 'session-1' });
      if (message.method === 'tools/list') {
        lists.push(String(session));
        return json({ result: { tools: [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } }] } });
      }
      if (message.method === 'tools/call') return json({ result: { content: [{ type: 'text', text: 'done' }] } });
      json({ error: { code: -32601, message: 'Method not found' } });
    }, closeAfter);
    const handle = await startOpsHandle({ url, timeoutSeconds: 15, closeAfter, ready: () => getsAnswered > 0, readyWhat: 'the GET with the session answered 405' });

    expect(lists).toEqual(['session-1']);
    // The call is checked against a tools/list of its own (each call over HTTP is): one more, not a loop of them.
    await expect(handle.tools()[0]!.execute({ service: 'api' }, context as never)).resolves.toBeDefined();
    expect(lists).toEqual(['session-1', 'session-1']);
  });
});
