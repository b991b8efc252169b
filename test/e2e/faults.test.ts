import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { startFlakySlackEdge } from '../helpers/flaky-slack-edge.js';
import { BOT_USER_ID, CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

// Registered before the harnesses' own, so it runs after them: the fakes outlive the bots that call them.
const closeAfter: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closeAfter.splice(0).reverse()) await close();
});

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

  it('does not post again after a 5xx (Slack may have posted it), and leaves a short message instead of silence', async () => {
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

  it('shows the answer once when Slack posted it but its edge answered 502', async () => {
    const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID });
    closeAfter.push(() => slack.close());
    const edge = await startFlakySlackEdge(slack, { method: 'chat.postMessage', lost: 'bad-gateway', matches: (form) => form.get('text') === 'Only one answer.' });
    closeAfter.push(() => edge.close());
    const h = await harness({ environment: { SLACK_API_URL: edge.url } });
    h.openai.enqueue({ text: 'Only one answer.' });
    const threadTs = nextTs();

    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    await h.settled();

    const replies = slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs);
    expect(replies.filter((message) => message.text === 'Only one answer.')).toHaveLength(1);
    // The bot read the thread, found the message Slack posted, and took it for the answer: nothing failed.
    expect(replies.at(-1)?.text).toBe('Only one answer.');
    expect(replies.some((message) => message.text.includes('Something went wrong'))).toBe(false);
  });
});
