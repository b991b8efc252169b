import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createOpsHandle, INITIALIZE_RESULT, listenOnLoopback, openEventStream, readRequest, useClosing } from './http-mcp-fixture.test-support.js';
import { until } from './until.test-support.js';

/**
 * close() waits for a connect alongside (for a lost event stream) before it lets go of the connection in
 * use: a tools/list that connection was asked (the server said its tools changed) and that is answered
 * meanwhile was applied to the closed server, which told onToolsChanged (and onRecovered or onProblem)
 * after the bot had shut it down, or, had the list failed, set a timer to list again.
 */
const closeAfter = useClosing();
const LIST_CHANGED = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;

describe('close() while a replacement connection is set up and a tools/list of the connection in use is under way', () => {
  it('the list answered meanwhile is not applied: nothing is said after close', { timeout: 40_000 }, async () => {
    const streams = new Set<ServerResponse>();
    let sessions = 0;
    let holdListsOf: string | undefined;
    let releaseList: (() => void) | undefined;
    let holdInitialize = false;
    let releaseInitialize: (() => void) | undefined;
    let tools: object[] = [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } }];
    const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
      const session = request.headers['mcp-session-id'] as string | undefined;
      if (request.method === 'GET') {
        if (!session) return void response.writeHead(400).end('no session');
        return openEventStream(streams, response);
      }
      if (request.method === 'DELETE') return void response.writeHead(200).end();
      const post = await readRequest<{ id?: number; method: string }>(request, response);
      if (!post) return;
      const { message, json } = post;
      if (message.method === 'initialize') {
        const answer = () => json({ result: INITIALIZE_RESULT }, { 'mcp-session-id': `session-${(sessions += 1)}` });
        if (holdInitialize) return void (releaseInitialize = answer);
        return answer();
      }
      if (message.method === 'tools/list') {
        if (session === holdListsOf) return void (releaseList = () => json({ result: { tools } }));
        return json({ result: { tools } });
      }
      json({ error: { code: -32601, message: 'Method not found' } });
    }, closeAfter);

    const logs: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _encoding, callback) => void (logs.push(chunk.toString('utf8')), callback()) }));
    let closing: Promise<void> | undefined;
    const saidAfterClose: string[] = [];
    const handle = createOpsHandle({
      url,
      timeoutSeconds: 15,
      logger,
      onToolsChanged: () => void (closing && saidAfterClose.push('onToolsChanged')),
      onProblem: (message) => void (closing && saidAfterClose.push(`onProblem: ${message}`)),
      onRecovered: (message) => void (closing && saidAfterClose.push(`onRecovered: ${message}`)),
      retry: { initialDelayMs: 50 },
    });
    closeAfter(() => handle.close());
    await handle.start();
    await until(() => streams.size > 0, 'the event stream of session-1 open');

    // The server says its tools changed: session-1 is listed again, the answer held.
    holdListsOf = 'session-1';
    tools = [{ name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' }, wipeData: { type: 'boolean' } } } }];
    for (const stream of streams) stream.write(LIST_CHANGED);
    await until(() => releaseList, 'the tools/list of session-1 under way');

    // Its event stream ends for good: the server is connected again alongside, the initialize held.
    holdInitialize = true;
    for (const stream of streams) stream.end();
    await until(() => releaseInitialize, 'the initialize of the replacement under way');

    // The bot stops now; close() waits for the replacement. The held list is answered meanwhile.
    closing = handle.close();
    releaseList!();
    // Barrier: the list's answer was read and dealt with, applied (before the fix) or dropped.
    await until(() => saidAfterClose.length > 0 || logs.some((line) => line.includes('"mcp-tools-list-after-close"')), 'the tools/list answer dealt with');
    releaseInitialize!();
    await closing;

    expect({ state: handle.status().state, saidAfterClose }).toEqual({ state: 'closed', saidAfterClose: [] });
  });
});
