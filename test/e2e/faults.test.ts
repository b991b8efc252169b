import { describe, expect, it } from 'vitest';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

describe('the model server failing', () => {
  it('gives up on a hung model after bounded retries, says so with a Try again button, and Try again continues the turn', async () => {
    const h = await harness({ modelTimeoutMs: 200 });
    h.openai.setResponder(() => ({ hang: true }));
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    // A timeout is not retried by the AI SDK (5xx and 429 are, twice, with backoff); the turn fails at once.
    expect(h.openai.requests).toHaveLength(1);
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry');
    expect(retry).toBeDefined();

    h.openai.setResponder(() => ({ text: 'All good now.' }));
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'All good now.'), { message: 'answer after retry' });
    // The history stayed consistent: one user message, answered once.
    const last = h.openai.requests.at(-1)!;
    expect(JSON.stringify(last.body)).toContain('status?');
  });
});

describe('the Slack API failing', () => {
  it('waits out a 429 with Retry-After and still posts the answer', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Posted after a rate limit.' });
    h.slack.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 1 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Posted after a rate limit.'), { timeoutMs: 8_000, message: 'answer' });
    expect(h.slack.callsTo('chat.postMessage').length).toBeGreaterThanOrEqual(2);
  });

  it('retries a 5xx a bounded number of times, then leaves a short message instead of silence', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'This answer cannot be posted.' });
    // Every attempt to show the answer fails (the first post, then the final one); notices get through.
    h.slack.failWhen('chat.postMessage', (call) => String(call.args.text).includes('cannot be posted'), { status: 500 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('Something went wrong on my side')), { timeoutMs: 8_000, message: 'notice' });
    expect(notice.text).not.toContain('xoxb');
    expect(h.slack.messages(CHANNEL, threadTs).some((message) => message.text === 'This answer cannot be posted.')).toBe(false);
  });
});
