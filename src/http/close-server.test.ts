import { once } from 'node:events';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeServer } from './close-server.js';

describe('closeServer', () => {
  it('lets a request in flight finish within the drain, and cuts one whose body never comes', async () => {
    let answer: (() => void) | undefined;
    const server = createServer((request, response) => {
      if (request.url === '/slow') answer = () => response.end('done');
    });
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
});
