import { afterEach, describe, expect, inject, it } from 'vitest';
import { startReplyLosingProxy, type ReplyLosingProxy } from '../helpers/reply-losing-proxy.js';
import { appMentionEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { BOT_USER_ID, CHANNEL, SIGNING_SECRET, TEAM_ID, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const proxies: ReplyLosingProxy[] = [];
// Registered before the harnesses' hook, so it runs after it: the bots stop while their Redis is still there.
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
});
const harness = useHarnesses();

describe('a mention whose delivery claim was written but whose reply was lost', () => {
  it('is answered: the resent claim is not taken for a duplicate and dropped in silence', async () => {
    const eventId = `EvLostClaimReply${Date.now()}`;
    const proxy = await startReplyLosingProxy(inject('redisUrl'), eventId);
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
