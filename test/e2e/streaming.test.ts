import { describe, expect, it } from 'vitest';
import type { RecordedSlackCall } from '../helpers/fake-slack-api.js';
import { CHANNEL, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/** Every text the thread showed for the message `ts`, in order: its post, then each edit. */
function showings(calls: readonly RecordedSlackCall[], ts: string, postedAs: RecordedSlackCall): RecordedSlackCall[] {
  return [postedAs, ...calls.filter((call) => call.method === 'chat.update' && call.args.ts === ts)];
}

describe('answers shown while the model writes them (chat.update mode)', () => {
  it('posts the first words at once, then edits the message at most about once a second until the answer is complete', async () => {
    const h = await harness();
    const answer = 'The worker in staging restarted cleanly and all twelve pods report ready again after the rollout finished.';
    h.openai.enqueue({ text: answer, deltaDelayMs: 120 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'how did the restart go?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'complete answer' });

    const replies = threadReplies(h, threadTs);
    expect(replies.filter((message) => message.text === answer)).toHaveLength(1);
    const posted = h.slack.callsTo('chat.postMessage').find((call) => call.args.thread_ts === threadTs && answer.startsWith(String(call.args.text)));
    expect(posted, 'the answer was posted before it was complete').toBeDefined();
    expect(String(posted!.args.text).length).toBeLessThan(answer.length);
    const ts = replies.find((message) => message.text === answer)!.ts;
    const shown = showings(h.slack.calls, ts, posted!);
    expect(shown.length).toBeGreaterThan(1);
    // Each showing extends the one before: the reader never sees text disappear.
    for (const [index, call] of shown.entries()) {
      if (index > 0) expect(String(call.args.text).startsWith(String(shown[index - 1]!.args.text))).toBe(true);
    }
    // Slack's chat.update budget: a lower bound on the gaps, which a slow machine only widens.
    for (const [index, call] of shown.entries()) {
      if (index > 0) expect(call.at - shown[index - 1]!.at).toBeGreaterThanOrEqual(900);
    }
  }, 30_000);

  it('rolls a long answer over into new messages before Slack cuts it, and never shows more than a message holds', async () => {
    const h = await harness();
    const paragraphs = Array.from({ length: 40 }, (_, index) => `Paragraph ${index + 1}: ${'the deployment history shows nothing unusual here. '.repeat(4)}`);
    const answer = paragraphs.join('\n\n');
    h.openai.enqueue({ text: answer, deltaDelayMs: 2 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'summarise the history', ts: threadTs });
    const last = paragraphs.at(-1)!.trim();
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.trimEnd().endsWith(last)), { timeoutMs: 20_000, message: 'last paragraph' });

    const replies = threadReplies(h, threadTs);
    expect(replies.length).toBeGreaterThanOrEqual(3);
    const shownTexts = h.slack.calls.filter((call) => (call.method === 'chat.postMessage' || call.method === 'chat.update') && call.args.channel === CHANNEL).map((call) => String(call.args.text ?? ''));
    for (const text of shownTexts) expect(text.length).toBeLessThanOrEqual(3900);
    const joined = replies.map((message) => message.text).join('\n\n');
    for (const paragraph of paragraphs) expect(joined).toContain(paragraph.trim());
    // Paragraphs in order, each once.
    expect(joined.match(/Paragraph \d+:/g)).toEqual(paragraphs.map((_, index) => `Paragraph ${index + 1}:`));
  }, 40_000);

  it('posts an answer that is complete before the stream would open in one message, never edited', async () => {
    const h = await harness();
    const answer = 'All twelve pods are ready.';
    // In five pieces over about 50 ms: streamed at once, the first words would be posted and then edited.
    h.openai.enqueue({ text: answer, deltaDelayMs: 10 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'are the pods ready?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'answer' });
    await h.settled();
    expect(h.slack.callsTo('chat.postMessage').filter((call) => call.args.thread_ts === threadTs).map((call) => call.args.text)).toEqual([answer]);
    expect(h.slack.callsTo('chat.update').filter((call) => call.args.channel === CHANNEL)).toEqual([]);
  }, 30_000);

  it('never shows a ping or a link whose text names another address, not even half-written', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Heads up <!channel> and <!subteam^S0ONCALL> and @here: log in at [bank.example/login](https://evil.example/steal) now.', deltaDelayMs: 60 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'anything to know?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('now.')), { timeoutMs: 15_000, message: 'answer' });
    const shownTexts = h.slack.calls
      .filter((call) => (call.method === 'chat.postMessage' && call.args.thread_ts === threadTs) || (call.method === 'chat.update' && call.args.channel === CHANNEL))
      .map((call) => String(call.args.text ?? ''));
    expect(shownTexts.length).toBeGreaterThan(1);
    for (const text of shownTexts) {
      expect(text).not.toMatch(/<!(channel|here|everyone|subteam)/);
      expect(text).not.toMatch(/(^|[^\u200b])@here/);
      // The label names another address, so it must never become the link's visible text.
      expect(text).not.toMatch(/\|bank\.example/);
    }
    expect(threadReplies(h, threadTs).at(-1)!.text).toContain('evil.example');
  }, 30_000);
});

describe("answers in Slack's native streaming (SLACK_STREAMING=native)", () => {
  const native = { environment: { SLACK_STREAMING: 'native' } };
  const streamTexts = (h: Awaited<ReturnType<typeof harness>>) =>
    h.slack.calls.filter((call) => call.method.endsWith('Stream')).map((call) => String(call.args.markdown_text ?? ''));

  it('streams the answer for the requester in the channel, line by line, and stops the stream when it is complete', async () => {
    const h = await harness(native);
    const answer = 'Status of the rollout:\n- api: **healthy**\n- worker: restarted 2 minutes ago\nNothing else needs attention.';
    h.openai.enqueue({ text: answer, deltaDelayMs: 80 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'rollout status?', ts: threadTs });
    await h.slack.waitForCall('chat.stopStream', undefined, { timeoutMs: 15_000 });

    const start = h.slack.callsTo('chat.startStream')[0]!;
    expect(start.args).toMatchObject({ channel: CHANNEL, thread_ts: threadTs, recipient_user_id: 'UALICE', recipient_team_id: 'T0TEAM001' });
    expect(h.slack.callsTo('chat.appendStream').length).toBeGreaterThan(0);
    // Slack renders the markdown itself; the thread holds the answer as written, in one message.
    const replies = threadReplies(h, threadTs);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.text).toBe(answer);
    expect(h.slack.callsTo('chat.postMessage').filter((call) => call.args.thread_ts === threadTs)).toHaveLength(0);
  }, 30_000);

  it('never sends a ping, Slack markup or a disguised link, not even half-written', async () => {
    const h = await harness(native);
    h.openai.enqueue({ text: 'Heads up <!channel> and @here\nlog in at [bank.example/login](https://evil.example/steal)\n<https://evil.example|bank.example> & done', deltaDelayMs: 40 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'anything to know?', ts: threadTs });
    await h.slack.waitForCall('chat.stopStream', undefined, { timeoutMs: 15_000 });
    const sent = streamTexts(h).join('');
    expect(sent).not.toMatch(/(^|[^\\])<!/);
    expect(sent).not.toMatch(/(^|[^\u200b])@here/);
    expect(sent).not.toContain('[bank.example/login](');
    expect(sent).toContain('bank.example/login (https://evil.example/steal)');
    expect(sent).toContain('\\<https://evil.example|bank.example>');
  }, 30_000);

  it('falls back to message edits when the app cannot stream, and stops trying', async () => {
    const h = await harness(native);
    h.slack.setMethodHandler('chat.startStream', () => ({ ok: false, error: 'feature_not_enabled' }));
    for (const answer of ['First answer, shown without streaming.', 'Second answer, also edited in place.']) {
      // Slow enough that the stream opens (an answer complete sooner is posted whole).
      h.openai.enqueue({ text: answer, deltaDelayMs: 100 });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'answer' });
      expect(threadReplies(h, threadTs)).toHaveLength(1);
    }
    expect(h.slack.callsTo('chat.startStream')).toHaveLength(1);
  }, 30_000);

  it('rolls a long answer over into a new stream before Slack cuts it', async () => {
    const h = await harness(native);
    const lines = Array.from({ length: 120 }, (_, index) => `Line ${index + 1}: the deployment history shows nothing unusual for this service.`);
    h.openai.enqueue({ text: lines.join('\n'), deltaDelayMs: 1 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'history?', ts: threadTs });
    const everyStreamStopped = () => h.slack.callsTo('chat.stopStream').length === h.slack.callsTo('chat.startStream').length;
    await h.slack.waitForCall('chat.startStream', undefined, { timeoutMs: 15_000 });
    await waitFor(() => (everyStreamStopped() && threadReplies(h, threadTs).some((message) => message.text.includes('Line 120:'))) || undefined, { timeoutMs: 15_000, message: 'last line, every stream stopped' });
    const replies = threadReplies(h, threadTs);
    expect(replies.length).toBeGreaterThanOrEqual(2);
    for (const reply of replies) expect(reply.text.length).toBeLessThanOrEqual(3900);
    expect(replies.map((reply) => reply.text).join('').match(/Line \d+:/g)).toEqual(lines.map((_, index) => `Line ${index + 1}:`));
  }, 30_000);
});
