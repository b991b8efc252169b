import { describe, expect, it } from 'vitest';
import { threadKeyOf } from '../../src/store/thread-state.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * Review J (6e474a1, "a save never shortens the thread's TTL"). README: `ttlHours` is how long the
 * "thread history [is] kept ... after the last message (a thread with a request waiting is kept
 * until 2 days past its expiry, if that is later)". createStep now stores the thread for
 * expiry + 2 days, and every later save keeps max(PTTL, ttl), so a thread whose request was decided
 * at once (nothing waits any more) is still kept until 2 days past that request's expiry: with
 * `ttlHours: 1` and `expiry: 30d`, 32 days instead of 1 hour, for every thread that ever showed a card.
 * An operator who sized Redis by ttlHours gets up to (expiry + 2d) / ttlHours times the memory.
 *
 * `ttlHours: 0.00125` (4.5 s of real Redis time) stands in for 1 hour; the expiry is 1h.
 */
const harness = useHarnesses();

const POLICY = `
history:
  ttlHours: 0.00125
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      expiry: 1h
`;

describe('a thread whose request was decided at once', () => {
  it('is kept ttlHours after its last message, like any thread where nothing waits', async () => {
    const h = await harness({ extraYaml: POLICY, sweepIntervalMs: 50 });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    await h.settled();
    // Nothing waits in the thread any more.
    const key = threadKeyOf({ teamId: TEAM_ID, channel: CHANNEL, threadTs });
    expect((await h.bot.store.getThread(key))?.pendingStepId).toBeUndefined();

    // Barrier: a thread saved after every save of ours lapses after its history TTL.
    h.openai.enqueue({ text: 'Hello there.' });
    const otherTs = nextTs();
    await h.mention({ user: 'UBOB', text: 'hi', ts: otherTs });
    await h.settled();
    expect(threadReplies(h, otherTs).map((message) => message.text)).toEqual(['Hello there.']);
    await waitFor(async () => (await h.bot.store.getThread(threadKeyOf({ teamId: TEAM_ID, channel: CHANNEL, threadTs: otherTs }))) === undefined, {
      message: 'the other thread to lapse',
      timeoutMs: 20_000,
    });

    // Ours was last saved before the other thread was: by the documented TTL it is gone too.
    expect({ decidedThreadStillStored: (await h.bot.store.getThread(key)) !== undefined }).toEqual({ decidedThreadStillStored: false });
  }, 60_000);
});
