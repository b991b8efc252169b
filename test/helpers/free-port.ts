import { createServer } from 'node:net';

/**
 * A port a process started next can listen on. Picked below Linux's ephemeral range (32768–60999): a
 * port from `listen(0)` is free only until something else takes it, and in that range every outgoing
 * connection of a busy suite (Redis clients, fetches), every other `listen(0)` and every inspector
 * started with `--inspect=127.0.0.1:0` draw from the same pool. A bot started a moment later then
 * failed with EADDRINUSE (replicas.test.ts); in the benchmark, of two servers started side by side,
 * the one that lost the port died while the other answered its /healthz (bench-smoke: ENOENT on
 * the dead one's /proc/<pid>/stat).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port found below the ephemeral range after 50 tries');
}

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  // On every interface, as the bots listen, so a port taken on any of them is skipped.
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, () => resolve(true));
  });
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}
