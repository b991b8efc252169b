import { describe, expect, it } from 'vitest';
import { watchNotifications } from './notification-watch.js';

/** The methods seen and the body the transport reads, for an event stream sent in `pieces`. */
async function watch(pieces: string[], contentType = 'text/event-stream') {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
  const methods: string[] = [];
  const fetch = watchNotifications({ onNotification: (method) => methods.push(method), fetch: async () => new Response(body, { headers: { 'content-type': contentType } }) });
  const response = await fetch('http://mcp.test/mcp', { method: 'GET' });
  return { methods, text: await response.text() };
}

const note = (method: string) => JSON.stringify({ jsonrpc: '2.0', method });

describe('watchNotifications', () => {
  it("tells each notification's method and passes the stream on unchanged", async () => {
    const pieces = [`event: message\ndata: ${note('notifications/tools/list_changed')}\n\n`, `data: ${note('notifications/progress')}\n\n`];
    const { methods, text } = await watch(pieces);
    expect(methods).toEqual(['notifications/tools/list_changed', 'notifications/progress']);
    expect(text).toBe(pieces.join(''));
  });

  it('reads events split anywhere, with CRLF, LF or CR line ends (a CRLF split between two pieces too), and multi-line data', async () => {
    const stream = `data: {"jsonrpc":"2.0",\r\ndata: "method":"a"}\r\r\ndata: ${note('b')}\r\rdata: ${note('c')}\n\n`;
    const cuts = [3, 24, 30, 46, 84, 100];
    const pieces = cuts.map((cut, index) => stream.slice(index === 0 ? 0 : cuts[index - 1], cut)).concat(stream.slice(cuts.at(-1)));
    expect((await watch(pieces)).methods).toEqual(['a', 'b', 'c']);
  });

  it('ignores requests, answers, other event types, data that is not JSON, and an event too long to be a notification', async () => {
    const { methods } = await watch([
      `data: ${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sampling/createMessage' })}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '2.0', id: 2, result: {} })}\n\n`,
      `event: ping\ndata: ${note('x')}\n\n`,
      'data: not json\n\n',
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'big', params: { pad: 'x'.repeat(70_000) } })}\n\n`,
      `data: ${note('after')}\n\n`,
    ]);
    expect(methods).toEqual(['after']);
  });

  it('leaves a JSON answer alone', async () => {
    expect(await watch([note('x')], 'application/json')).toEqual({ methods: [], text: note('x') });
  });
});
