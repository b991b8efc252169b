import { createConnection, createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * A TCP proxy in front of Redis that counts round trips. Every byte is forwarded unchanged; on the
 * way it parses the client's RESP commands and groups them into "flights": the commands that arrive
 * in one read of the client's socket, starting at a command boundary. ioredis writes a pipeline or a
 * MULTI…EXEC block with one socket write (so it is one flight, one round trip), a script call
 * (EVALSHA) is one command, and an ordinary `await redis.get()` is one flight of its own. A read that
 * starts in the middle of a command (a large value split by TCP) continues the previous flight.
 */
export interface RedisCommand {
  /** Upper-case command name. */
  name: string;
  /** The first key: the first argument, or for EVAL/EVALSHA the first key after numkeys. */
  key?: string;
}

export interface Flight {
  /** performance.now() when the flight arrived. */
  at: number;
  connection: number;
  commands: RedisCommand[];
  /** Bytes the client sent in this flight (commands and their values): what a write costs on the wire. */
  bytes: number;
}

export interface CountingProxy {
  url: string;
  port: number;
  flights(): readonly Flight[];
  /** performance.now() of the last client or server traffic. */
  lastActivityAt(): number;
  close(): Promise<void>;
}

export async function startCountingProxy(target: { host: string; port: number }): Promise<CountingProxy> {
  const flights: Flight[] = [];
  const sockets = new Set<Socket>();
  let connectionSequence = 0;
  let lastActivity = performance.now();

  const server = createServer((client) => {
    connectionSequence += 1;
    const connection = connectionSequence;
    const upstream = createConnection(target);
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    const parser = createRespCommandParser();
    let current: Flight | undefined;
    client.on('data', (chunk: Buffer) => {
      lastActivity = performance.now();
      upstream.write(chunk);
      const startsFlight = parser.atBoundary() || current === undefined;
      const commands = parser.push(chunk);
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
    });
    const closeBoth = () => {
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    flights: () => flights,
    lastActivityAt: () => lastActivity,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Incremental parser of client-side RESP: arrays of bulk strings (what ioredis sends). */
export function createRespCommandParser(): { push(chunk: Buffer): RedisCommand[]; atBoundary(): boolean } {
  let buffer: Buffer = Buffer.alloc(0);

  function readLine(offset: number): { line: string; next: number } | undefined {
    const end = buffer.indexOf('\r\n', offset);
    if (end === -1) return undefined;
    return { line: buffer.toString('latin1', offset, end), next: end + 2 };
  }

  function parseOne(): { command: RedisCommand; next: number } | undefined {
    const header = readLine(0);
    if (!header) return undefined;
    if (!header.line.startsWith('*')) {
      // An inline command (redis-cli style): the whole line.
      const [name = '', key] = header.line.trim().split(/\s+/);
      return { command: { name: name.toUpperCase(), ...(key ? { key } : {}) }, next: header.next };
    }
    const count = Number(header.line.slice(1));
    const args: string[] = [];
    let offset = header.next;
    for (let index = 0; index < count; index += 1) {
      const lengthLine = readLine(offset);
      if (!lengthLine) return undefined;
      const length = Number(lengthLine.line.slice(1));
      const end = lengthLine.next + length;
      if (buffer.length < end + 2) return undefined;
      // Only the first few arguments matter (name, keys); values can be large.
      if (index < 5) args.push(buffer.toString('utf8', lengthLine.next, Math.min(end, lengthLine.next + 256)));
      offset = end + 2;
    }
    const name = (args[0] ?? '').toUpperCase();
    const key = name === 'EVAL' || name === 'EVALSHA' ? (Number(args[2]) > 0 ? args[3] : undefined) : args[1];
    return { command: { name, ...(key === undefined ? {} : { key }) }, next: offset };
  }

  return {
    atBoundary: () => buffer.length === 0,
    push(chunk) {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      const commands: RedisCommand[] = [];
      for (;;) {
        const parsed = parseOne();
        if (!parsed) break;
        commands.push(parsed.command);
        buffer = buffer.subarray(parsed.next);
      }
      if (buffer.length === 0) buffer = Buffer.alloc(0);
      return commands;
    },
  };
}
