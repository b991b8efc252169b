import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * The stored history is untrusted (thread-loader: "a history that fails validation starts fresh").
 * One list entry that is not JSON at all (a tampered store, a bad manual fix) must not make every
 * later turn of the thread fail.
 */
describe('a stored history entry that is not JSON', () => {
  it('the next message is still answered (the history starts fresh), not "Something went wrong" on every turn', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'First answer.' }, { text: 'Second answer.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'First answer.'), { message: 'first answer' });
    await h.settled();

    const redis = new Redis(inject('redisUrl'));
    try {
      const [key] = await redis.keys(`${h.keyPrefix}*thread-messages:*`);
      expect(key).toBeDefined();
      await redis.lset(key!, 0, '{"role":"user","content":"trunc');
    } finally {
      redis.disconnect();
    }

    await h.threadMessage({ user: 'UALICE', text: 'and now?', threadTs });
    await waitFor(() => threadReplies(h, threadTs).length >= 2, { timeoutMs: 10_000, message: 'a reply to the second message' });
    await h.settled();
    expect(threadReplies(h, threadTs).map((message) => message.text).slice(1)).toEqual(['Second answer.']);
  }, 30_000);
});

/**
 * A history that fails validation is dropped ("starting fresh"), but the thread's pending step is
 * kept: the newer message closes the step's calls with results whose calls are no longer in the
 * history, and every later request carries a tool result with no call before it (Chat Completions
 * and Responses both refuse that with a 400), so the thread never answers again.
 */
describe('a stored history that fails validation while a card waits', () => {
  it('the next message sends no tool result without its call', async () => {
    const h = await harness({ api: 'chat' });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'OK, not restarting.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await h.settled();

    const redis = new Redis(inject('redisUrl'));
    try {
      const [key] = await redis.keys(`${h.keyPrefix}*thread-messages:*`);
      // Valid JSON, not a message the AI SDK's schema accepts (another version's, a tampered store's).
      await redis.lset(key!, 0, JSON.stringify({ role: 'user', content: [{ type: 'hologram' }] }));
    } finally {
      redis.disconnect();
    }

    await h.threadMessage({ user: 'UALICE', text: 'never mind', threadTs });
    await waitFor(() => h.openai.requests.length >= 2, { timeoutMs: 10_000, message: 'the request for the next message' });
    await h.settled();
    const conversation = conversationOf(h.openai.requests.at(-1)!);
    const calls = new Set(conversation.flatMap((entry) => (entry.toolCalls ?? []).map((call) => call.id)));
    const orphans = conversation.filter((entry) => entry.role === 'tool' && !calls.has(entry.toolCallId!));
    expect(orphans, JSON.stringify(conversation, null, 1)).toEqual([]);

    // The card's step went with the history: its card no longer offers a decision, and a late Approve is refused and runs nothing.
    expect(cardButtons(threadReplies(h, threadTs).find((message) => message.ts === card.ts)?.blocks)).toEqual([]);
    const requests = h.openai.requests.length;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text))[0], { message: 'answer to the click' });
    await h.settled();
    expect({ refusal, restarts: h.invocations(), modelAsked: h.openai.requests.length > requests }).toEqual({ refusal: expect.stringContaining('nothing changed'), restarts: [], modelAsked: false });
  }, 30_000);
});
