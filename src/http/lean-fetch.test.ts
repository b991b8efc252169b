import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { listenOnLoopback, readRequestBody, type LoopbackServer } from '../sandbox/emulator/loopback-http.js';
import { createLeanFetch } from './lean-fetch.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => Promise<void> | void;

let servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function serve(handler: Handler): Promise<string> {
  const server = await listenOnLoopback({ listener: handler });
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

/** A fallback that records what reached it and answers a marker response. */
function recordingFallback() {
  const calls: { input: unknown; init: RequestInit | undefined }[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    calls.push({ input, init });
    return new Response('from fallback', { status: 299 });
  };
  return { calls, fetch };
}

describe('lean fetch', () => {
  it('sends the method, headers and string body, and answers a Response with status, headers and body', async () => {
    let seen: { method?: string; type?: string; authorization?: string; body: string } | undefined;
    const url = await serve(async (request, response) => {
      seen = { method: request.method, type: request.headers['content-type'], authorization: request.headers.authorization, body: await readRequestBody(request) };
      response.writeHead(201, { 'content-type': 'application/json', 'x-slack-req-id': 'r1' });
      response.end(JSON.stringify({ ok: true, ts: '1.2' }));
    });
    const fallback = recordingFallback();
    const fetch = createLeanFetch({ fallback: fallback.fetch, environment: {} });
    const response = await fetch(`${url}/api/chat.postMessage`, {
      method: 'POST',
      headers: new Headers({ 'content-type': 'application/x-www-form-urlencoded', authorization: 'Bearer xoxb-1' }),
      body: 'channel=C1&text=hi',
    });
    expect(seen).toEqual({ method: 'POST', type: 'application/x-www-form-urlencoded', authorization: 'Bearer xoxb-1', body: 'channel=C1&text=hi' });
    expect([response.status, response.statusText, response.ok]).toEqual([201, 'Created', true]);
    expect(response.headers.get('x-slack-req-id')).toBe('r1');
    expect(await response.json()).toEqual({ ok: true, ts: '1.2' });
    expect(fallback.calls).toEqual([]);
  });

  it('hands an event stream over as it arrives, not when it ends', async () => {
    let release: () => void = () => {};
    const firstChunkRead = new Promise<void>((resolve) => {
      release = resolve;
    });
    const url = await serve(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
      // The stream ends only after the client has read its first event.
      await firstChunkRead;
      response.end('data: two\n\n');
    });
    const response = await createLeanFetch({ environment: {} })(`${url}/v1/responses`, { method: 'POST', body: '{}' });
    const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    expect((await reader.read()).value).toBe('data: one\n\n');
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value;
    expect(rest).toBe('data: two\n\n');
  });

  it('fails a refused connection as fetch does (TypeError "fetch failed" with the cause), which the AI SDK retries', async () => {
    const url = await serve(() => {});
    await servers.pop()?.close();
    const failure = await createLeanFetch({ environment: {} })(`${url}/v1/responses`, { method: 'POST', body: '{}' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('fetch failed');
    expect(((failure as TypeError).cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('fails a connection cut while a JSON answer is read as fetch does (TypeError "fetch failed" with the cause)', async () => {
    // The cut must come after the answer's head reached the client, or it is the request that
    // fails: a dispatcher that tells the server when the client has the head makes the order sure.
    let clientHasHead!: () => void;
    const headReceived = new Promise<void>((resolve) => (clientHasHead = resolve));
    const dispatcher = new Agent().compose((dispatch) => (options, handler) =>
      dispatch(
        options,
        new Proxy(handler, {
          get(target, property) {
            const value = Reflect.get(target, property);
            if (typeof value !== 'function') return value;
            if (property !== 'onHeaders' && property !== 'onResponseStart') return value.bind(target);
            return (...parameters: unknown[]) => {
              clientHasHead();
              return value.apply(target, parameters);
            };
          },
        }),
      ),
    );
    const url = await serve(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"ok":tr');
      await headReceived;
      response.socket?.destroy();
    });
    const failure = await createLeanFetch({ environment: {}, dispatcher })(`${url}/api/chat.postMessage`, { method: 'POST', body: '{}' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('fetch failed');
    expect((failure as TypeError).cause).toBeInstanceOf(Error);
  });

  it('rejects with the abort reason, before the answer and while a streamed body is read', async () => {
    let answered: () => void = () => {};
    const requestArrived = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const url = await serve((request, response) => {
      if (request.url === '/slow') {
        answered();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
    });
    const fetch = createLeanFetch({ environment: {} });
    const controller = new AbortController();
    const pending = fetch(`${url}/slow`, { method: 'POST', body: '{}', signal: controller.signal }).catch((error: unknown) => error);
    await requestArrived;
    const reason = new Error('the model did not answer in time');
    controller.abort(reason);
    expect(await pending).toBe(reason);

    const streaming = new AbortController();
    const response = await fetch(`${url}/stream`, { method: 'POST', body: '{}', signal: streaming.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    streaming.abort(new Error('lease lost'));
    await expect(reader.read()).rejects.toBeTruthy();
  });

  it('answers 204 with no body', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(204);
      response.end();
    });
    const response = await createLeanFetch({ environment: {} })(url, { method: 'DELETE' });
    expect([response.status, response.body]).toEqual([204, null]);
  });

  it('leaves to fetch what it does not take: form bodies, manual redirects, compression, redirect answers, proxied environments', async () => {
    let hits = 0;
    const url = await serve((_request, response) => {
      hits += 1;
      response.writeHead(302, { location: '/elsewhere' });
      response.end();
    });
    const fallback = recordingFallback();
    const fetch = createLeanFetch({ fallback: fallback.fetch, environment: {} });
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x.txt');
    expect((await fetch(`${url}/upload`, { method: 'POST', body: form })).status).toBe(299);
    expect((await fetch(`${url}/manual`, { redirect: 'manual' })).status).toBe(299);
    expect((await fetch(`${url}/compressed`, { headers: { 'Accept-Encoding': 'gzip' } })).status).toBe(299);
    expect(hits).toBe(0);
    // A redirect answer is asked again through fetch, which knows redirect rules.
    expect((await fetch(`${url}/moved`, { method: 'POST', body: 'a=1' })).status).toBe(299);
    expect(hits).toBe(1);
    expect(fallback.calls.map((call) => String(call.input))).toEqual([`${url}/upload`, `${url}/manual`, `${url}/compressed`, `${url}/moved`]);
    expect(fallback.calls[3]?.init?.body).toBe('a=1');

    expect(createLeanFetch({ fallback: fallback.fetch, environment: { NODE_USE_ENV_PROXY: '1' } })).toBe(fallback.fetch);
  });
});
