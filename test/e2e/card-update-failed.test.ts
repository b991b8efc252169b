import { describe, expect, it } from 'vitest';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

describe('a card whose update after the deciding click fails (Slack rate limits chat.update past the retries)', () => {
  it('is shown decided eventually, or the thread is told: not left with live buttons for a call that already ran', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'staging' } }] });
    h.openai.enqueue({ text: 'Restarted api.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;

    // Every try of the card's update (the client's first and its two retries) is rate limited.
    h.slack.failNext('chat.update', { status: 429, retryAfterSeconds: 1 }, 3);
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted api.'), { timeoutMs: 20_000, message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toHaveLength(1);

    const shown = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    const told = threadReplies(h, threadTs).some((message) => /could not update|card/i.test(message.text) && message.ts !== card.ts);
    expect({ buttons: cardButtons(shown.blocks).map((button) => button.actionId), told }, 'the card still offers Approve/Deny for a call that ran, and nothing says so').not.toMatchObject({
      buttons: expect.arrayContaining(['countersign_approve']),
      told: false,
    });
  });
});
