import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createRespCommandParser, createRespReplyParser, type RedisCommand } from './resp-parsers.js';

export type { RedisCommand } from './resp-parsers.js';

/**
 * A TCP proxy in front of Redis that counts round trips. Every byte is forwarded unchanged; on the
 * way it parses the client's RESP commands and groups them into "flights", one per round trip the
 * client started:
 *
 * - With `clientWrites` (how the benchmark runs it), a flight is one write of the client: the bot
 *   process is started with bench/lib/redis-write-reporter.ts preloaded, which reports the length of
 *   each of its writes to Redis on `reportPort`, and the proxy cuts the bytes it forwards at those
 *   lengths. ioredis writes a command, a pipeline or a MULTI…EXEC block with one socket write, so each
 *   is one flight, however TCP happens to deliver them (two writes in the same tick often arrive in
 *   one read).
 * - Without it, a flight is what arrives in one read of the client's socket, starting at a command
 *   boundary (a read that starts inside a command continues the previous flight): two writes that
 *   arrive together count once. Kept for a client that cannot be given the preload.
 *
 * Either way, a blocking pop (BLMPOP, or BLPOP on Redis 6) whose reply carries work adds a flight of
 * its own when the reply passes (`delivery`): its command was written earlier, while the worker
 * waited, so no write of the request shows the round trip that handed the work over.
 */
export interface Flight {
  /** performance.now() when the flight arrived (a delivery: when its reply passed). */
  at: number;
  connection: number;
  commands: RedisCommand[];
  /** Bytes the client sent in this flight (commands and their values): what a write costs on the wire. */
  bytes: number;
  /** A blocking pop's reply that handed work to the client (its command was sent before). */
  delivery?: true;
}

export interface CountingProxy {
  url: string;
  port: number;
  /** With `clientWrites`: where the preloaded reporter sends the lengths of the client's writes. */
  reportPort: number | undefined;
  flights(): readonly Flight[];
  /** performance.now() of the last client or server traffic, or write report. */
  lastActivityAt(): number;
  /** With `clientWrites`: client bytes not yet matched to a reported write (a flight still forming). */
  unmatchedBytes(): number;
  close(): Promise<void>;
}

const BLOCKING_POPS = new Set(['BLMPOP', 'BLPOP']);

/** One client connection's bytes and write lengths, matched into flights as both arrive. */
interface WriteMatcher {
  chunks: Array<{ buffer: Buffer; at: number }>;
  lengths: number[];
}

export async function startCountingProxy(target: { host: string; port: number }, options: { clientWrites?: boolean } = {}): Promise<CountingProxy> {
  const flights: Flight[] = [];
  const sockets = new Set<Socket>();
  let connectionSequence = 0;
  let lastActivity = performance.now();
  // By the client's local port, which its reports name: the proxy sees it as the connection's remote port.
  const matchers = new Map<number, { connection: number; matcher: WriteMatcher; parser: ReturnType<typeof createRespCommandParser>; awaiting: string[] }>();
  // Reports can come before the proxy has accepted the connection they are about.
  const earlyLengths = new Map<number, number[]>();

  /** Cuts the connection's bytes at each reported write length: one flight per write. */
  const matchWrites = (clientPort: number) => {
    const state = matchers.get(clientPort);
    if (!state) return;
    const { matcher } = state;
    for (;;) {
      const length = matcher.lengths[0];
      const available = matcher.chunks.reduce((sum, chunk) => sum + chunk.buffer.length, 0);
      if (length === undefined || available < length) return;
      matcher.lengths.shift();
      const at = matcher.chunks[0]?.at ?? performance.now();
      const parts: Buffer[] = [];
      let needed = length;
      while (needed > 0) {
        const chunk = matcher.chunks[0] as { buffer: Buffer; at: number };
        const take = Math.min(needed, chunk.buffer.length);
        parts.push(chunk.buffer.subarray(0, take));
        needed -= take;
        if (take === chunk.buffer.length) matcher.chunks.shift();
        else chunk.buffer = chunk.buffer.subarray(take);
      }
      const commands = state.parser.push(Buffer.concat(parts));
      state.awaiting.push(...commands.map((command) => command.name));
      flights.push({ at, connection: state.connection, commands, bytes: length });
    }
  };

  const server = createServer((client) => {
    connectionSequence += 1;
    const connection = connectionSequence;
    const clientPort = client.remotePort ?? -connection;
    const upstream = createConnection(target);
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    const parser = createRespCommandParser();
    const replies = createRespReplyParser();
    const state = { connection, matcher: { chunks: [], lengths: earlyLengths.get(clientPort) ?? [] } as WriteMatcher, parser, awaiting: [] as string[] };
    earlyLengths.delete(clientPort);
    matchers.set(clientPort, state);
    let current: Flight | undefined;
    client.on('data', (chunk: Buffer) => {
      lastActivity = performance.now();
      upstream.write(chunk);
      if (options.clientWrites) {
        state.matcher.chunks.push({ buffer: chunk, at: lastActivity });
        matchWrites(clientPort);
        return;
      }
      const startsFlight = parser.atBoundary() || current === undefined;
      const commands = parser.push(chunk);
      state.awaiting.push(...commands.map((command) => command.name));
      if (startsFlight) {
        current = { at: lastActivity, connection, commands: [], bytes: 0 };
        flights.push(current);
      }
      if (current) {
        current.commands.push(...commands);
        current.bytes += chunk.length;
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      lastActivity = performance.now();
      client.write(chunk);
      // Replies come in the order of the commands: a blocking pop's reply that is not null handed work over.
      for (const reply of replies.push(chunk)) {
        const command = state.awaiting.shift();
        if (command !== undefined && BLOCKING_POPS.has(command) && !reply.isNull) flights.push({ at: lastActivity, connection, commands: [{ name: command }], bytes: 0, delivery: true });
      }
    });
    const closeBoth = () => {
      if (matchers.get(clientPort) === state) matchers.delete(clientPort);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
  });
  await listen(server);
  const reports = options.clientWrites ? await startReportServer({ sockets, onReport: (clientPort, length) => {
    lastActivity = performance.now();
    const state = matchers.get(clientPort);
    if (!state) {
      earlyLengths.set(clientPort, [...(earlyLengths.get(clientPort) ?? []), length]);
      return;
    }
    state.matcher.lengths.push(length);
    matchWrites(clientPort);
  } }) : undefined;
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    reportPort: reports ? (reports.address() as { port: number }).port : undefined,
    flights: () => flights,
    lastActivityAt: () => lastActivity,
    unmatchedBytes: () => [...matchers.values()].reduce((sum, state) => sum + state.matcher.chunks.reduce((bytes, chunk) => bytes + chunk.buffer.length, 0), 0),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      if (reports) await new Promise((resolve) => reports.close(resolve));
    },
  };
}

/** Where the preloaded reporters send `<client port> <bytes>` lines, one per write to Redis. */
async function startReportServer(options: { sockets: Set<Socket>; onReport: (clientPort: number, length: number) => void }): Promise<Server> {
  const server = createServer((socket) => {
    options.sockets.add(socket);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [clientPort, length] = line.split(' ').map(Number);
        if (Number.isInteger(clientPort) && Number.isInteger(length)) options.onReport(clientPort as number, length as number);
      }
    });
    socket.on('close', () => options.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  });
  await listen(server);
  return server;
}

function listen(server: Server): Promise<void> {
  return new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}
