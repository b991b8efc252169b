import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeConnectionsAtStop, closeServer } from './close-server.js';

/** Everything the server sends on `socket` until it closes it. */
async function untilClosed(socket: Socket): Promise<string> {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  if (!socket.closed) await once(socket, 'close');
  return text;
}

describe('closeServer', () => {
  it('lets a request in flight finish within the drain, and cuts one whose body never comes', async () => {
    let answer: (() => void) | undefined;
    const server = closeConnectionsAtStop(
      createServer((request, response) => {
        if (request.url === '/slow') answer = () => response.end('done');
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    const stalled = connect(port, '127.0.0.1');
    stalled.on('error', () => {});
    const stalledTaken = once(server, 'request');
    stalled.write('POST /stalled HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"type":');
    await stalledTaken;
    const slowTaken = once(server, 'request');
    const slow = fetch(`http://127.0.0.1:${port}/slow`);
    await slowTaken;

    // Long enough for the slow request to be answered first, short enough for the test.
    const closed = closeServer(server, { drainMs: 500 });
    answer?.();
    expect(await (await slow).text()).toBe('done');
    await closed;
    if (!stalled.closed) await once(stalled, 'close');
    expect(stalled.closed).toBe(true);
  });

  it('closes each connection once its answer is sent after the stop began, so none carries another request', async () => {
    const responses = new Map<string | undefined, ServerResponse>();
    const server = closeConnectionsAtStop(createServer((request, response) => void responses.set(request.url, response)));
    // Else Node would close an idle kept-alive connection itself after 5 s.
    server.keepAliveTimeout = 0;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const open = async (request: string) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      socket.write(request);
      return socket;
    };

    // Not answered yet as the stop begins.
    const waiting = await open('GET /waiting HTTP/1.1\r\nHost: x\r\n\r\n');
    // Its headers (keep-alive) already sent as the stop begins, its body not.
    const streaming = await open('GET /streaming HTTP/1.1\r\nHost: x\r\n\r\n');
    // Its request only in part on the way as the stop begins.
    const late = await open('GET /late HTTP/1.1\r\n');
    while (responses.size < 2) await once(server, 'request');
    responses.get('/streaming')?.writeHead(200, { 'content-length': '4' }).flushHeaders();
    const answered = [untilClosed(waiting), untilClosed(streaming), untilClosed(late)];

    const closed = closeServer(server, { drainMs: 60_000 });
    const lateTaken = once(server, 'request');
    late.write('Host: x\r\n\r\n');
    await lateTaken;
    for (const response of responses.values()) response.end('done');
    // Long before the drain's end (past the test's timeout): every connection closed once its answer was sent.
    await closed;
    const [waitingText, streamingText, lateText] = await Promise.all(answered);
    expect(waitingText).toMatch(/^HTTP\/1\.1 200.*\r\nConnection: close\r\n.*done$/s);
    expect(streamingText).toMatch(/^HTTP\/1\.1 200.*done$/s);
    expect(lateText).toMatch(/^HTTP\/1\.1 200.*\r\nConnection: close\r\n.*done$/s);
  });

  it('still stops a server not made ready for it where it was created', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await closeServer(server);
    expect(server.listening).toBe(false);
  });
});
