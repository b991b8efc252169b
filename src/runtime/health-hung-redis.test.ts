import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../http/metrics-server.js';
import { createRedisStore } from '../store/redis-store.js';
import type { StateStore } from '../store/state-store.js';
import { createHealthServer, healthReply } from './health-check.js';
import { REPLY_TIMEOUT_MS } from '../slack/front/slack-front-server.js';

/** The Slack front's wait for the bot's thread's answer: the other listeners should not wait longer. */

/**
 * The Slack front answers `/healthz` 503 when the bot's thread has not answered in 3 s. The other
 * listeners of `/healthz` (a worker's `PORT`, the `METRICS_PORT` copy, Socket Mode's `PORT`) answered
 * only once the store did: a Redis that takes the connection and never answers (hung, paused, a
 * black-holed route) held every probe open until the prober gave up, with no reason given.
 */
describe('/healthz on a Redis that never answers', () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  let store: StateStore;
  beforeAll(async () => {
    // Accepts connections and reads what is sent; never replies.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    store = createRedisStore({ url: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`, keyPrefix: 'test:health-hung:' });
  });
  afterAll(async () => {
    await store?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  const listeners: Array<[string, () => Promise<{ server: import('node:http').Server; port: number }>]> = [
    [
      "a worker's PORT",
      async () => {
        const server = createHealthServer({ store, servedBy: 'a countersign worker' });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return { server, port: (server.address() as AddressInfo).port };
      },
    ],
    ['METRICS_PORT', () => startMetricsServer({ store, renderMetrics: async () => ({ contentType: 'text/plain', body: '' }), port: 0, host: '127.0.0.1' })],
  ];

  it.each(listeners)('answers 503 within its time limit on %s, saying Redis did not answer', async (_name, listen) => {
    const { server, port } = await listen();
    try {
      const started = Date.now();
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(REPLY_TIMEOUT_MS + 5_000) });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ status: 'unavailable', store: 'redis', redis: 'down', reason: 'Redis did not answer within 2.5 s' });
      expect(Date.now() - started).toBeLessThan(REPLY_TIMEOUT_MS);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('healthReply with a time limit', () => {
  const never = () => new Promise<never>(() => {});
  it('is 503 when the ping does not settle in time, and 200 without warnings when only the risks do not', async () => {
    const hungPing = await healthReply({ kind: 'redis', ping: never, risks: async () => [] }, { timeoutMs: 50 });
    expect(hungPing.status).toBe(503);
    expect(JSON.parse(hungPing.body).reason).toBe('Redis did not answer within 0.05 s');
    const hungRisks = await healthReply({ kind: 'redis', ping: async () => {}, risks: never }, { timeoutMs: 50 });
    expect(hungRisks.status).toBe(200);
    expect(JSON.parse(hungRisks.body)).toEqual({ status: 'ok', store: 'redis', redis: 'up' });
  });
});
