import { describe, expect, it } from 'vitest';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * Slack's 429 window for a status call: ten minutes. Every wait on it (the client's pause of every
 * call, its retries, the turn's wait for the status in flight) lasts at least this long, far past
 * the waits below; only a bot that waits on nothing of it answers within them.
 */
const RETRY_AFTER_SECONDS = 600;
/** Generous for a turn through the fake servers on a busy machine, and a fraction of the window above. */
const ANSWER_WAIT_MS = 30_000;

describe('assistant.threads.setStatus rate limited (429 with Retry-After)', () => {
  it('does not hold the answer back: a best-effort status line is not worth waiting for', async () => {
    const h = await harness({ statusDelayMs: 0 });
    // Slack throttles the status line (a special-tier method).
    h.slack.failWhen('assistant.threads.setStatus', () => true, { status: 429, retryAfterSeconds: RETRY_AFTER_SECONDS });
    h.openai.setResponder(async () => {
      // The model answers once the turn's status call has gone out and was throttled.
      await h.slack.waitForCall('assistant.threads.setStatus', undefined, { timeoutMs: ANSWER_WAIT_MS });
      return { text: 'Here is the answer.' };
    });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Here is the answer.'), { timeoutMs: ANSWER_WAIT_MS, message: 'the answer, posted within the status call\'s 429 window' });
  }, 2 * ANSWER_WAIT_MS);

  it('does not hold back other threads, nor other calls, while a status call is in its 429 window', async () => {
    const h = await harness({ statusDelayMs: 0 });
    const threadA = nextTs();
    const threadB = nextTs();
    h.slack.failWhen('assistant.threads.setStatus', (call) => call.args.thread_ts === threadA, { status: 429, retryAfterSeconds: RETRY_AFTER_SECONDS });
    h.openai.setResponder(async (request) => {
      if (JSON.stringify(request.body).includes('quick one')) return { text: 'Answer for B.' };
      // Thread A's status call got its 429; thread B is asked meanwhile, and A answers once B has.
      await h.slack.waitForCall('assistant.threads.setStatus', (call) => call.args.thread_ts === threadA, { timeoutMs: ANSWER_WAIT_MS });
      await h.mention({ user: 'UBOB', text: 'quick one', ts: threadB });
      await waitFor(() => threadReplies(h, threadB).some((message) => message.text === 'Answer for B.'), { timeoutMs: ANSWER_WAIT_MS, message: 'the answer in thread B, within thread A\'s 429 window' });
      return { text: 'Answer for A.' };
    });
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadA });
    await waitFor(() => threadReplies(h, threadA).some((message) => message.text === 'Answer for A.'), { timeoutMs: 2 * ANSWER_WAIT_MS, message: 'the answer in thread A, within its 429 window' });
    expect(threadReplies(h, threadB).map((message) => message.text)).toContain('Answer for B.');
  }, 3 * ANSWER_WAIT_MS);
});
