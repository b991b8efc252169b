import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/** A WAITAOF the proxy answered, and the command its connection sent just before it. */
export interface SeenWaitAof {
  args: string[];
  after: string[] | undefined;
}

export interface WaitAofProxy {
  url: string;
  /** Every WAITAOF sent through the proxy, in order. */
  seen: SeenWaitAof[];
  /** What WAITAOF answers (numlocal, numreplicas): `[1, 0]`, the primary's file has it; `[0, 0]`, the wait ran out first. */
  answer: [number, number];
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a Redis that has no WAITAOF (before 7.2, such as Debian 12's 7.0), which
 * answers WAITAOF as a 7.2 server would, with `answer`: it sends the server, in its place, an EVAL
 * that returns that pair, so every reply keeps its order on the connection. Every other command and
 * every reply goes through untouched (`INFO persistence` is the real server's). For tests of the bot's
 * use of WAITAOF where only an older Redis is installed; a Redis 7.2 is tested directly.
 */
export async function startWaitAofProxy({ port: serverPort }: { port: number }): Promise<WaitAofProxy> {
  const sockets = new Set<Socket>();
  const proxy: WaitAofProxy = { url: '', seen: [], answer: [1, 0], close: async () => {} };
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: serverPort });
    sockets.add(client).add(upstream);
    const forget = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', forget).on('close', forget);
    upstream.on('error', forget).on('close', forget);
    upstream.pipe(client);
    let pending = Buffer.alloc(0);
    let last: string[] | undefined;
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = parseCommand(pending);
        if (!parsed) return;
        pending = pending.subarray(parsed.length);
        if (parsed.args[0]?.toUpperCase() === 'WAITAOF') {
          proxy.seen.push({ args: parsed.args, after: last });
          upstream.write(encodeCommand(['EVAL', `return {${proxy.answer[0]}, ${proxy.answer[1]}}`, '0']));
        } else {
          upstream.write(parsed.bytes);
        }
        last = parsed.args;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `redis://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

/** One command as clients send it (`*N` then N bulk strings); undefined until all of it has arrived. */
function parseCommand(buffer: Buffer): { args: string[]; bytes: Buffer; length: number } | undefined {
  const header = readLine(buffer, 0);
  if (!header) return undefined;
  if (!header.line.startsWith('*')) throw new Error(`the proxy reads only RESP arrays, got ${JSON.stringify(header.line)}`);
  const count = Number(header.line.slice(1));
  const args: string[] = [];
  let offset = header.next;
  for (let index = 0; index < count; index += 1) {
    const size = readLine(buffer, offset);
    if (!size) return undefined;
    const length = Number(size.line.slice(1));
    if (buffer.length < size.next + length + 2) return undefined;
    args.push(buffer.subarray(size.next, size.next + length).toString('utf8'));
    offset = size.next + length + 2;
  }
  return { args, bytes: buffer.subarray(0, offset), length: offset };
}

function readLine(buffer: Buffer, offset: number): { line: string; next: number } | undefined {
  const end = buffer.indexOf('\r\n', offset);
  return end === -1 ? undefined : { line: buffer.subarray(offset, end).toString('utf8'), next: end + 2 };
}

function encodeCommand(args: string[]): Buffer {
  return Buffer.from(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`);
}
