import { describe, expect, it } from 'vitest';
import { cappedFetch } from './capped-fetch.js';

/** A fetch that answers every request with `body`, sent in chunks of 1000 bytes. */
function answering(body: string, contentType: string): typeof fetch {
  return async () => {
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 1000) controller.enqueue(bytes.subarray(offset, offset + 1000));
        controller.close();
      },
    });
    return new Response(stream, { status: 200, headers: { 'content-type': contentType } });
  };
}

const event = (data: string) => `event: message\r\ndata: ${data}\r\n\r\n`;

describe('cappedFetch', () => {
  it('ends an answer past the cap with an error, and passes a smaller one whole', async () => {
    const small = cappedFetch({ maxBytes: 10_000, fetch: answering('y'.repeat(10_000), 'application/json') });
    await expect((await small('http://mcp.test/', { method: 'POST' })).text()).resolves.toHaveLength(10_000);
    const big = cappedFetch({ maxBytes: 10_000, fetch: answering('y'.repeat(10_001), 'application/json') });
    await expect((await big('http://mcp.test/', { method: 'POST' })).text()).rejects.toThrow("the MCP server's answer is larger than 10000 bytes; it was not read");
  });

  it('counts an event stream a GET opens per event: many small notifications pass, one too large does not', async () => {
    const notifications = Array.from({ length: 50 }, () => event('z'.repeat(500))).join('');
    const many = cappedFetch({ maxBytes: 1000, fetch: answering(notifications, 'text/event-stream') });
    await expect((await many('http://mcp.test/', { method: 'GET' })).text()).resolves.toBe(notifications);
    const large = cappedFetch({ maxBytes: 1000, fetch: answering(event('z'.repeat(500)) + event('z'.repeat(2000)), 'text/event-stream') });
    await expect((await large('http://mcp.test/', { method: 'GET' })).text()).rejects.toThrow('larger than 1000 bytes');
  });

  it('counts the event stream answering a POST whole: it ends with its answer', async () => {
    const notifications = Array.from({ length: 50 }, () => event('z'.repeat(500))).join('');
    const capped = cappedFetch({ maxBytes: 1000, fetch: answering(notifications, 'text/event-stream') });
    await expect((await capped('http://mcp.test/', { method: 'POST' })).text()).rejects.toThrow('larger than 1000 bytes');
  });
});
