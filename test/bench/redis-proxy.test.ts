import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { foreground } from '../../bench/lib/redis-accounting.js';
import { startCountingProxy, type CountingProxy, type Flight } from '../../bench/lib/redis-proxy.js';
import { installRedisWriteReporter } from '../../bench/lib/redis-write-reporter.js';
import { waitUntil } from '../../bench/lib/workload.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';

let redis: RedisServerHandle;
let proxy: CountingProxy;
let uninstall: () => void;
const clients: Redis[] = [];
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.stop();
});
beforeEach(async () => {
  proxy = await startCountingProxy({ host: '127.0.0.1', port: redis.port }, { clientWrites: true });
  // What the bench preloads into the bot, here in this process: only sockets to the proxy's port are reported.
  uninstall = installRedisWriteReporter({ reportPort: proxy.reportPort as number, redisPort: proxy.port });
});
afterEach(async () => {
  uninstall();
  for (const client of clients.splice(0)) client.disconnect();
  await proxy.close();
});

async function connectedClient(): Promise<Redis> {
  const client = new Redis(proxy.url, { enableAutoPipelining: false });
  clients.push(client);
  await client.ping();
  return client;
}

/** The flights since `from`, once every byte forwarded has been matched to a reported write. */
async function flightsSince(from: number): Promise<Flight[]> {
  await waitUntil(() => proxy.unmatchedBytes() === 0, { timeoutMs: 5_000, message: 'every write to be reported' });
  return proxy.flights().slice(from);
}

const names = (flights: Flight[]) => flights.map((flight) => flight.commands.map((command) => `${command.name} ${command.key ?? ''}`.trim()).join(' + '));

/**
 * README: "A round trip is one client write that starts a command". The proxy counted one flight per
 * read of the client socket: two writes that were in the socket buffer together (issued in the same
 * tick, or the second written while the proxy was busy) were one "round trip", so the count moved
 * with the machine's load rather than with the writes the bot made.
 */
it('two separate client writes of two commands count as two round trips, however TCP delivers them', async () => {
  const client = await connectedClient();
  const from = proxy.flights().length;
  await Promise.all([client.set('proxy-test:a', '1'), client.set('proxy-test:b', '2')]);
  expect(names(foreground(await flightsSince(from)))).toEqual(['SET proxy-test:a', 'SET proxy-test:b']);
});

it('a pipeline, written at once, is one round trip; a value larger than one read is one too', async () => {
  const client = await connectedClient();
  const from = proxy.flights().length;
  await client.pipeline().set('proxy-test:c', '1').get('proxy-test:c').exec();
  await client.set('proxy-test:large', 'x'.repeat(2 * 1024 * 1024));
  const flights = await flightsSince(from);
  expect(names(flights)).toEqual(['SET proxy-test:c + GET proxy-test:c', 'SET proxy-test:large']);
  expect(flights[1]?.bytes).toBeGreaterThan(2 * 1024 * 1024);
});

/**
 * With COUNTERSIGN_ROLE=split the worker waits in BLMPOP (written before the request, and again after
 * it, as an idle wait the accounting leaves out); the receiver's hand-off wakes it. That round trip
 * carried the turn but no write of the request shows it: it was filtered out and never added back.
 */
it('a blocking pop whose reply hands work over counts as a round trip of the request; an idle one does not', async () => {
  const waiter = await connectedClient();
  const producer = await connectedClient();
  // An idle wait that times out: its write and its empty reply are not the request's.
  const idleFrom = proxy.flights().length;
  expect(await waiter.blmpop(0.1, 1, 'proxy-test:ready', 'LEFT')).toBeNull();
  expect(foreground(await flightsSince(idleFrom))).toEqual([]);

  const beforeWait = proxy.flights().length;
  const waiting = waiter.blmpop(5, 1, 'proxy-test:ready', 'LEFT');
  await waitUntil(() => proxy.flights().slice(beforeWait).some((flight) => flight.commands[0]?.name === 'BLMPOP'), { timeoutMs: 5_000, message: 'the wait to be written' });
  const from = proxy.flights().length;
  await producer.rpush('proxy-test:ready', 'thread');
  expect(await waiting).toEqual(['proxy-test:ready', ['thread']]);
  const request = foreground(await flightsSince(from));
  expect(names(request)).toEqual(['RPUSH proxy-test:ready', 'BLMPOP']);
  expect(request[1]?.delivery).toBe(true);
});
