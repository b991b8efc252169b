import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { appMentionEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { BOT_USER_ID, CHANNEL, SIGNING_SECRET, TEAM_ID, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * A TCP proxy in front of the suite's Redis that forwards everything, except that the first reply
 * to a command naming `marker` is not delivered: the connection is cut once Redis has answered,
 * as a network blip, a proxy's reset or a killed client connection would cut it. Redis has run the
 * command; the client never hears so.
 */
async function replyLosingProxy(redisUrl: string, marker: string): Promise<{ url: string; cut: () => boolean; close: () => Promise<void> }> {
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

const proxies: Array<{ close: () => Promise<void> }> = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
});

describe('a mention whose delivery claim was written but whose reply was lost', () => {
  it('is answered: the resent claim is not taken for a duplicate and dropped in silence', async () => {
    const eventId = `EvLostClaimReply${Date.now()}`;
    const proxy = await replyLosingProxy(inject('redisUrl'), eventId);
    proxies.push(proxy);
    const h = await harness({ redisUrl: proxy.url });
    h.openai.enqueue({ text: 'Here is your answer.' });
    const ts = nextTs();
    const envelope = appMentionEnvelope({ user: 'UALICE', text: `<@${BOT_USER_ID}> how are the pods in staging?`, channel: CHANNEL, teamId: TEAM_ID, botUserId: BOT_USER_ID, ts, eventId });
    expect((await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope })).status).toBe(200);
    await waitFor(() => proxy.cut(), { message: 'the claim reply to be cut' });
    // ioredis reconnects and resends the claim, which finds its own write: the mention is answered.
    await waitFor(() => threadReplies(h, ts).some((message) => message.text === 'Here is your answer.'), { timeoutMs: 15_000, message: 'the answer' });
    await h.settled();

    expect(h.openai.requests).toHaveLength(1);
    expect(threadReplies(h, ts).map((message) => message.text)).toEqual(['Here is your answer.']);
  }, 30_000);
});
