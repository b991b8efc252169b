import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Sits in front of the fake OpenAI and passes every request on; the n-th answer (0-based) has its
 * body rewritten by `rewrite`, as a server that ends a response another way would send it.
 */
export async function startRewritingProxy(options: { target: string; rewrite: (index: number, body: string) => string }) {
  let index = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const mine = index++;
    const target = new URL(options.target);
    const upstream = await fetch(`${target.origin}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json', authorization: String(req.headers.authorization ?? '') }, body: Buffer.concat(chunks) });
    const text = await upstream.text();
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(options.rewrite(mine, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
