import { describe, expect, it } from 'vitest';
import { watchEventStream, type EventStreamLoss } from './event-stream-watch.js';

/** What the watch tells for one request answered with `response`, once the transport read the body (or cancelled it). */
async function watch(options: { method?: string; response: () => Response | Promise<Response>; read?: 'all' | 'cancel'; signal?: AbortSignal }) {
  const told: Array<'opened' | EventStreamLoss> = [];
  const fetch = watchEventStream({ onOpened: () => told.push('opened'), onLost: (loss) => told.push(loss), fetch: async () => options.response() });
  const response = await fetch('http://mcp.test/mcp', { method: options.method ?? 'GET', ...(options.signal ? { signal: options.signal } : {}) }).catch((error: unknown) => error);
  if (response instanceof Response && response.body) {
    if (options.read === 'cancel') await response.body.cancel();
    else await response.text().catch(() => {});
  }
  return told;
}

const stream = (body: ReadableStream<Uint8Array> | string, status = 200) => new Response(body, { status, headers: { 'content-type': 'text/event-stream' } });

describe('watchEventStream', () => {
  it('tells that the GET stream opened, and that it was lost when the server ended it (the client does not reopen it)', async () => {
    expect(await watch({ response: () => stream('data: {}\n\n') })).toEqual(['opened', { reason: 'it ended its event stream', reopensItself: false }]);
  });

  it('tells a GET answered with an error status as lost for good, but not a 405 (the server offers no such stream)', async () => {
    expect(await watch({ response: () => new Response('upstream restarting', { status: 503 }) })).toEqual([{ reason: 'its event stream was answered HTTP 503', reopensItself: false }]);
    expect(await watch({ response: () => new Response(null, { status: 405 }) })).toEqual([]);
  });

  it('does not tell a GET sent without a session answered 400 (before initialize, a server with sessions wants one), but one with a session', async () => {
    const told: Array<'opened' | EventStreamLoss> = [];
    const fetch = watchEventStream({ onOpened: () => told.push('opened'), onLost: (loss) => told.push(loss), fetch: async () => new Response('Mcp-Session-Id header is required', { status: 400 }) });
    await fetch('http://mcp.test/mcp', { method: 'GET', headers: { accept: 'text/event-stream' } });
    expect(told).toEqual([]);
    await fetch('http://mcp.test/mcp', { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': 'session-1' } });
    expect(told).toEqual([{ reason: 'its event stream was answered HTTP 400', reopensItself: false }]);
  });

  it('tells a broken stream and a failed GET as lost, the client trying again itself', async () => {
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.error(new Error('other side closed'));
      },
    });
    expect(await watch({ response: () => stream(broken) })).toEqual(['opened', { reason: 'its event stream broke (other side closed)', reopensItself: true }]);
    expect(await watch({ response: () => Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') })) })).toEqual([
      { reason: 'its event stream could not be opened (fetch failed: connect ECONNREFUSED)', reopensItself: true },
    ]);
  });

  it('says nothing of a stream the client cancelled or aborted (it is closing), nor of the streams answering a POST', async () => {
    const endless = () => stream(new ReadableStream<Uint8Array>({}));
    expect(await watch({ response: endless, read: 'cancel' })).toEqual(['opened']);
    const aborted = AbortSignal.abort();
    expect(await watch({ response: () => Promise.reject(new DOMException('aborted', 'AbortError')), signal: aborted })).toEqual([]);
    expect(await watch({ method: 'POST', response: () => stream('data: {}\n\n') })).toEqual([]);
    expect(await watch({ method: 'POST', response: () => new Response('no', { status: 503 }) })).toEqual([]);
  });

  it('does not tell a GET answered 409 while another GET of the connection is open or under way (one stream per session), but one alone', async () => {
    const told: Array<'opened' | EventStreamLoss> = [];
    const answers: Array<(response: Response) => void> = [];
    const fetch = watchEventStream({
      onOpened: () => told.push('opened'),
      onLost: (loss) => told.push(loss),
      fetch: () => new Promise<Response>((resolve) => answers.push(resolve)),
    });
    const get = () => fetch('http://mcp.test/mcp', { method: 'GET', headers: { 'mcp-session-id': 'session-1' } });
    const duplicate = () => new Response('Only one SSE stream is allowed per session', { status: 409 });
    // The first GET not answered yet: the second's 409 is a duplicate.
    const first = get();
    const second = get();
    answers[1]!(duplicate());
    await second;
    expect(told).toEqual([]);
    // The first opened: a third GET's 409 is a duplicate too.
    let end!: () => void;
    answers[0]!(stream(new ReadableStream<Uint8Array>({ start: (controller) => void (end = () => controller.close()) })));
    const opened = await first;
    const third = get();
    answers[2]!(duplicate());
    await third;
    expect(told).toEqual(['opened']);
    // The first ended: a 409 now is the session's stream held by no one the bot hears.
    end();
    await opened.text();
    const fourth = get();
    answers[3]!(duplicate());
    await fourth;
    expect(told).toEqual(['opened', { reason: 'it ended its event stream', reopensItself: false }, { reason: 'its event stream was answered HTTP 409', reopensItself: false }]);
  });

  it('tells a GET answered 409 as lost once the other GET failed, or was cancelled', async () => {
    expect(await watch({ response: () => new Response(null, { status: 409 }) })).toEqual([{ reason: 'its event stream was answered HTTP 409', reopensItself: false }]);
    const told: Array<'opened' | EventStreamLoss> = [];
    const answers = [() => Promise.reject(new TypeError('fetch failed')), () => Promise.resolve(stream(new ReadableStream<Uint8Array>({}))), () => Promise.resolve(new Response(null, { status: 409 }))];
    const fetch = watchEventStream({ onOpened: () => told.push('opened'), onLost: (loss) => told.push(loss), fetch: () => answers.shift()!() });
    const get = () => fetch('http://mcp.test/mcp', { method: 'GET', headers: { 'mcp-session-id': 'session-1' } });
    await get().catch(() => {});
    const opened = await get();
    await opened.body!.cancel();
    await get();
    expect(told).toEqual([
      { reason: 'its event stream could not be opened (fetch failed)', reopensItself: true },
      'opened',
      { reason: 'its event stream was answered HTTP 409', reopensItself: false },
    ]);
  });
});
