import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface ReplyLosingProxy {
  url: string;
  /** Whether the reply has been cut yet. */
  cut: () => boolean;
  close: () => Promise<void>;
}

/**
 * A TCP proxy in front of a Redis that forwards everything, except that the first reply to a
 * command naming `marker` is not delivered: the connection is cut once Redis has answered, as a
 * network blip, a proxy's reset or a killed client connection would cut it. Redis has run the
 * command; the client never hears so (ioredis sends it again on its new connection).
 * Close it after the bot using it has stopped: a bot whose Redis is gone takes long to stop.
 */
export async function startReplyLosingProxy(redisUrl: string, marker: string): Promise<ReplyLosingProxy> {
  const target = new URL(redisUrl);
  let cut = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    let armed = false;
    client.on('data', (chunk) => {
      if (!cut && chunk.toString('latin1').includes(marker)) armed = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (armed && !cut) {
        cut = true;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    cut: () => cut,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
