import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createOpsHandle, DEPLOY_TOOL, eventStreamControls, listenOnLoopback, openEventStream, readCall, useClosing } from './http-mcp-fixture.test-support.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * 9321766 refused as not run (ToolNotStartedError) a call whose client was closed under it between its own
 * tools/list and its tools/call (while `assertHeld` read its grant), but only when the client had been marked
 * by `lost()` (`retire(client, { broken: true })`). A connection replaced for its event stream was retired
 * unmarked, and when an answer stream on it then broke, `onBroken` closed its client at once without marking
 * it. A call whose list had been read on that connection then handed tools/call to a closed client: @ai-sdk/mcp
 * refused it before sending ("Attempted to send a request from a closed client"), the refusal was wrapped as
 * "… failed: …", and the turn recorded a call that never left the bot as run and failed (on a grant: run
 * without a card). So it was until f3d412e.
 */
const closeAfter = useClosing();

async function fakeServer() {
  const streams = new Set<ServerResponse>();
  let sessions = 0;
  const calls: Array<{ session: string; args: unknown }> = [];
  const heldAnswers: ServerResponse[] = [];
  const url = await listenOnLoopback(async (request: IncomingMessage, response: ServerResponse) => {
    const session = String(request.headers['mcp-session-id']);
    if (request.method === 'GET') return openEventStream(streams, response);
    if (request.method === 'DELETE') return void response.writeHead(200).end();
    const post = await readCall(request, response, { session: () => `session-${(sessions += 1)}` });
    if (!post) return;
    const { message, id, json } = post;
    if (message.method === 'tools/list') return json({ result: { tools: [DEPLOY_TOOL] } });
    if (message.method === 'tools/call') {
      calls.push({ session, args: message.params?.arguments });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if ((message.params?.arguments as { service?: string })?.service === 'long') {
        // Carried out slowly: the answer stream stays open (a progress event sent) until the test breaks it.
        response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
        heldAnswers.push(response);
        return;
      }
      return void response.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
    }
    json({ error: { code: -32601, message: 'Method not found' } });
  }, closeAfter);
  return { url, calls, heldAnswers, ...eventStreamControls(streams) };
}

describe('an HTTP MCP call whose retired (replaced) connection breaks while its grant is checked, after its list', () => {
  it('is recorded as not run (ToolNotStartedError): tools/call was never sent', { timeout: 40_000 }, async () => {
    const fake = await fakeServer();
    let toolsChanged = 0;
    const handle = createOpsHandle({ url: fake.url, timeoutSeconds: 15, retry: { initialDelayMs: 50 }, onToolsChanged: () => (toolsChanged += 1) });
    closeAfter(() => handle.close());
    await handle.start();
    await until(() => fake.openStreams() > 0, 'the event stream of session-1 open');
    const deploy = handle.tools()[0]!;

    // A long call under way on session-1, its answer stream open.
    const long = outcome(deploy.execute({ service: 'long' }, context) as Promise<unknown>);
    await until(() => fake.heldAnswers.length === 1, 'the long call on session-1');

    // Call X: its own tools/list is read on session-1, then its grant is checked (a Redis round trip) — held here.
    let grantChecked!: () => void;
    let inGrantCheck = false;
    const assertHeld = () =>
      new Promise<void>((resolve) => {
        inGrantCheck = true;
        grantChecked = resolve;
      });
    const x = outcome(deploy.execute({ service: 'api' }, { ...(context as object), assertHeld } as never) as Promise<unknown>);
    await until(() => inGrantCheck, "call X's list read, its grant being checked");

    // The event stream ends: session-2 is connected alongside and swapped in; session-1 is retired (its calls under way).
    const changedBefore = toolsChanged;
    fake.endStreams();
    await until(() => toolsChanged > changedBefore, 'session-2 connected and in use');

    // The long call's answer stream breaks (a proxy cuts it): onBroken closes session-1's client at once.
    fake.heldAnswers[0]!.destroy();
    await expect(long).resolves.toEqual({ refused: expect.stringContaining('failed') });

    // X's grant check ends: its tools/call was never sent; it must be recorded as not run.
    grantChecked();
    const result = await x;
    expect({ x: result, callsOfX: fake.calls.filter((call) => (call.args as { service?: string }).service === 'api') }).toEqual({
      x: { refused: 'server-unavailable' },
      callsOfX: [],
    });
  });
});
