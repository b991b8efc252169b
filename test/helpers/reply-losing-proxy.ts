import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface ReplyLosingProxy {
  url: string;
  /** Whether the reply has been cut yet. */
  cut: () => boolean;
  /** Whether the proxy takes connections again after the outage `refuseForMs` asked for (at once without one). */
  back: () => boolean;
  close: () => Promise<void>;
}

/**
 * A TCP proxy in front of a Redis that forwards everything, except that the first reply to a
 * command naming `marker` is not delivered: the connection is cut once Redis has answered, as a
 * network blip, a proxy's reset or a killed client connection would cut it. Redis has run the
 * command; the client never hears so (ioredis sends it again on its new connection).
 * With `refuseForMs`, the proxy then refuses new connections for that long (Redis unreachable): the
 * client's reconnects fail, and once they are more than its `maxRetriesPerRequest` ioredis rejects
 * the command it never heard back about instead of sending it again. Connections already open stay.
 * Close it after the bot using it has stopped: a bot whose Redis is gone takes long to stop.
 */
export async function startReplyLosingProxy(redisUrl: string, marker: string, options: { refuseForMs?: number } = {}): Promise<ReplyLosingProxy> {
  const target = new URL(redisUrl);
  let cut = false;
  let back = options.refuseForMs === undefined;
  let closed = false;
  const sockets = new Set<Socket>();
  const handle = (client: Socket) => {
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
        if (options.refuseForMs !== undefined) refuseFor(options.refuseForMs);
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
  };
  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const server = createServer(handle);
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
  let server = await listen(0);
  const { port } = server.address() as AddressInfo;
  // Not listening: a connect is refused (ECONNREFUSED), as by a Redis that is down.
  function refuseFor(ms: number): void {
    server.close();
    setTimeout(() => {
      if (closed) return;
      void listen(port).then((reopened) => {
        if (closed) return void reopened.close();
        server = reopened;
        back = true;
      });
    }, ms).unref();
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    cut: () => cut,
    back: () => back,
    close: async () => {
      closed = true;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
