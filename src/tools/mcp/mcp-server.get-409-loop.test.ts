import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createOpsHandle, useClosing } from './http-mcp-fixture.test-support.js';
import { until } from './until.test-support.js';

/**
 * A duplicate GET answered 409 beside the session's open event stream is not taken as the stream lost.
 * @ai-sdk/mcp opens the session's GET stream when the initialize answer sets the protocol version, and
 * once more when notifications/initialized is answered 202 if the first GET has not been answered yet (a
 * slow proxy, a busy server). The official TypeScript SDK answers that second GET 409 ("Only one SSE
 * stream is allowed per session") while the first is open. Until 241bd4c watchEventStream counted the 409
 * as the event stream lost for good, so the bot connected the server again alongside a connection whose
 * stream was open, the new connection did the same, and so on forever (backoff to 5 min), with
 * mcp-event-stream-lost named in /healthz from the second round, and (since 2eb99e7) each round's late
 * first stream listing the tools again and refusing them meanwhile.
 */
const closeAfter = useClosing();

describe('an official-SDK server whose GET event stream is answered after notifications/initialized', () => {
  it('the duplicate GET answered 409 is not taken as the event stream lost (the stream is open)', { timeout: 30_000 }, async () => {
    const transports = new Map<string, StreamableHTTPServerTransport>();
    let initializes = 0;
    const gets: string[] = [];
    // Per session: its GETs held until it asks for its tools (undefined once released).
    const held = new Map<string, Array<() => void> | undefined>();
    const http = createServer((request: IncomingMessage, response: ServerResponse) => {
      void (async () => {
        const session = request.headers['mcp-session-id'] as string | undefined;
        let transport = session ? transports.get(session) : undefined;
        if (!transport) {
          const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, created) });
          const server = new McpServer({ name: 's', version: '1' }, { capabilities: { tools: { listChanged: true } } });
          server.tool('deploy', { service: z.string() }, async () => ({ content: [{ type: 'text' as const, text: 'ok' }] }));
          await server.connect(created);
          transport = created;
        }
        const chunks: Buffer[] = [];
        if (request.method === 'POST') for await (const chunk of request) chunks.push(chunk as Buffer);
        const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
        if (body?.method === 'initialize') initializes += 1;
        const handle = () => void transport!.handleRequest(request, response, body);
        if (request.method === 'GET' && session) {
          response.on('finish', () => gets.push(`${session} ${response.statusCode}`));
          // As a slow proxy: the session's GET is answered once the client asked for the tools (it had its 202 by then).
          if (!held.has(session)) held.set(session, []);
          const waiting = held.get(session);
          if (waiting) return void waiting.push(handle);
        }
        if (body?.method === 'tools/list' && session && held.get(session) !== undefined) {
          const release = held.get(session)!;
          held.set(session, undefined);
          for (const next of release) next();
        } else if (body?.method === 'tools/list' && session && !held.has(session)) held.set(session, undefined);
        handle();
      })();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    closeAfter(
      () =>
        new Promise<void>((resolve) => {
          http.closeAllConnections();
          http.close(() => resolve());
        }),
    );
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const logs: Array<{ event?: string; err?: string }> = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        logs.push(JSON.parse(chunk.toString('utf8')));
        callback();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    const handle = createOpsHandle({ url, timeoutSeconds: 15, logger, retry: { initialDelayMs: 50 } });
    closeAfter(() => handle.close());
    await handle.start();

    // Barrier: the 409 of the duplicate GET reached the bot (the client reports it after the bot's fetch saw it, and
    // after the bot logged any loss it took it for), or, where it was taken as a loss, the third connect of the loop.
    const lost = () => logs.filter((line) => line.event === 'mcp-event-stream-lost').map((line) => (line as { reason?: string }).reason);
    const seen409 = () => logs.some((line) => line.event === 'mcp-client-error' && String(line.err).includes('409'));
    await until(() => (seen409() && lost().length === 0) || (initializes >= 3 && handle.status().warnings), 'the 409 of the duplicate GET read by the bot, or a reconnect loop');
    expect(gets.some((get) => get.endsWith(' 409'))).toBe(true);
    expect({ initializes, streamLost: lost(), warnings: handle.status().warnings?.map((warning) => warning.code) }).toEqual({ initializes: 1, streamLost: [], warnings: undefined });
  });
});
