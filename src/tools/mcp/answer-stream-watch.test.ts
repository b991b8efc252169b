import { describe, expect, it } from 'vitest';
import { watchAnswerStreams } from './answer-stream-watch.js';
import { cappedFetch } from './capped-fetch.js';
import { isConnectionFailure } from './mcp-problems.js';

const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`;

/** A fetch whose answer sends one event, then ends as `end` says: cleanly, or with `error` (the socket was cut). */
function answering(options: { contentType: string; end: 'close' | Error; bytes?: number }): typeof fetch {
  return async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(options.bytes === undefined ? event : 'x'.repeat(options.bytes)));
        if (options.end === 'close') controller.close();
        else controller.error(options.end);
      },
    });
    return new Response(stream, { status: 200, headers: { 'content-type': options.contentType } });
  };
}

function watching(base: typeof fetch) {
  const broken: unknown[] = [];
  return { fetch: watchAnswerStreams({ fetch: base, onBroken: (error) => broken.push(error) }), broken };
}

describe('watchAnswerStreams', () => {
  it('reports an answer stream of a request that breaks, and the reader still gets the error', async () => {
    const cut = new TypeError('terminated');
    const { fetch, broken } = watching(answering({ contentType: 'text/event-stream', end: cut }));
    const response = await fetch('http://mcp.test/', { method: 'POST' });
    await expect(response.text()).rejects.toBe(cut);
    expect(broken).toEqual([cut]);
  });

  it("ends a request's broken answer stream with an error answer to it, so that request (and only it) fails at once", async () => {
    const cut = new TypeError('terminated');
    const { fetch, broken } = watching(answering({ contentType: 'text/event-stream', end: cut }));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'deploy' } });
    const text = await (await fetch('http://mcp.test/', { method: 'POST', body })).text();
    const answers = text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice('data: '.length)));
    expect(answers.at(-1)).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'Connection closed', data: expect.any(String) } });
    expect(isConnectionFailure(Object.assign(new Error(answers.at(-1).error.message), answers.at(-1).error))).toBe(true);
    expect(isConnectionFailure(Object.assign(new Error('Connection closed'), { code: -32000 }))).toBe(false);
    expect(broken).toEqual([cut]);
  });

  it('says nothing of a stream that ends cleanly, of an aborted request, or of one its reader cancels', async () => {
    const clean = watching(answering({ contentType: 'text/event-stream', end: 'close' }));
    await expect((await clean.fetch('http://mcp.test/', { method: 'POST' })).text()).resolves.toBe(event);

    // A timeout or the client closing aborts the request's signal: the transport ends the read itself.
    const aborted = watching(answering({ contentType: 'text/event-stream', end: new DOMException('aborted', 'AbortError') }));
    const controller = new AbortController();
    controller.abort();
    await expect((await aborted.fetch('http://mcp.test/', { method: 'POST', signal: controller.signal })).text()).rejects.toThrow('aborted');

    const cancelled = watching(answering({ contentType: 'text/event-stream', end: 'close' }));
    await (await cancelled.fetch('http://mcp.test/', { method: 'POST' })).body!.cancel();

    expect([...clean.broken, ...aborted.broken, ...cancelled.broken]).toEqual([]);
  });

  it('leaves alone the event stream a GET opens (the transport reconnects it) and a JSON answer', async () => {
    const get = watching(answering({ contentType: 'text/event-stream', end: new TypeError('terminated') }));
    await expect((await get.fetch('http://mcp.test/', { method: 'GET' })).text()).rejects.toThrow('terminated');
    const json = watching(answering({ contentType: 'application/json', end: new TypeError('terminated') }));
    await expect((await json.fetch('http://mcp.test/', { method: 'POST' })).text()).rejects.toThrow('terminated');
    expect([...get.broken, ...json.broken]).toEqual([]);
  });

  it('over the size cap: an answer too large is answered with the cap\'s error, not taken for a broken connection', async () => {
    const capped = cappedFetch({ maxBytes: 1000, fetch: answering({ contentType: 'text/event-stream', end: 'close', bytes: 2000 }) });
    const { fetch, broken } = watching(capped);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'deploy' } });
    const text = await (await fetch('http://mcp.test/', { method: 'POST', body })).text();
    const answer = JSON.parse(text.split('data: ').at(-1)!.trim());
    expect(answer).toMatchObject({ id: 7, error: { message: expect.stringContaining('larger than 1000 bytes') } });
    expect(isConnectionFailure(Object.assign(new Error(answer.error.message), answer.error))).toBe(false);
    expect(broken).toEqual([]);
  });
});
