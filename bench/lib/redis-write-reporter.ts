import { createConnection, Socket } from 'node:net';

/**
 * Preloaded into a bot process whose Redis traffic is counted (`node --require <this file>`, which
 * unlike `--import` also runs in the process's worker threads, the bot thread among them), with
 * BENCH_REDIS_PORT (the counting proxy's port, which the bot takes for Redis) and
 * BENCH_REDIS_WRITES_PORT (the proxy's report port). It tells the proxy the length of every write the
 * thread makes to a socket connected to that port, as `<local port> <bytes>` lines, so the proxy can cut
 * the bytes it forwards where the client's writes begin: TCP may deliver two writes in one read, and
 * a proxy counting reads counts them once. ioredis writes each command, and each pipeline or
 * MULTI…EXEC block, with one `socket.write`. Only the bench starts a bot with it; the bot's own code
 * is not changed.
 */
export function installRedisWriteReporter(options: { reportPort: number; redisPort: number }): () => void {
  const report = createConnection({ host: '127.0.0.1', port: options.reportPort });
  report.setNoDelay(true);
  // A lost report connection must not take the bot down; the proxy then sees bytes no write accounts for.
  report.on('error', () => {});
  report.unref();
  const prototype = Socket.prototype as unknown as { write: (...args: unknown[]) => boolean };
  const ownWrite = Object.hasOwn(prototype, 'write');
  const original = prototype.write;
  prototype.write = function (this: Socket, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (this !== report && this.remotePort === options.redisPort && this.localPort !== undefined) {
      const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : (chunk as Uint8Array).byteLength;
      original.call(report, `${this.localPort} ${bytes}\n`);
    }
    return original.call(this, chunk, encoding, callback);
  };
  return () => {
    if (ownWrite) prototype.write = original;
    else delete (prototype as { write?: unknown }).write;
    report.destroy();
  };
}

const reportPort = Number(process.env.BENCH_REDIS_WRITES_PORT);
const redisPort = Number(process.env.BENCH_REDIS_PORT);
if (reportPort > 0 && redisPort > 0) installRedisWriteReporter({ reportPort, redisPort });
