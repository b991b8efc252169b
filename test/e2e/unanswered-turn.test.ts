import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

describe('a turn that ends without an answer', () => {
  it('says it stopped at agent.maxSteps, clears the status line, and Try again continues without running the calls again', async () => {
    const h = await harness({ extraYaml: 'agent:\n  maxSteps: 2\n', statusDelayMs: 0 });
    // The model keeps calling a read-only tool; the second step is the last one allowed.
    h.openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] }, { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'check every namespace', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('I stopped after 2 steps without finishing')), { message: 'step-limit notice' });
    await h.settled();
    expect(h.openai.requests).toHaveLength(2);
    expect(h.invocations()).toHaveLength(2);
    // Slack clears the status ("is running get_pods…") when the bot posts: the notice comes after the last one.
    const methods = h.slack.calls.map((call) => call.method);
    expect(h.slack.callsTo('assistant.threads.setStatus').length).toBeGreaterThan(0);
    expect(methods.lastIndexOf('assistant.threads.setStatus')).toBeLessThan(methods.lastIndexOf('chat.postMessage'));

    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry');
    expect(retry).toBeDefined();
    h.openai.enqueue({ text: 'staging and prod both run pod-a.' });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'staging and prod both run pod-a.'), { message: 'answer after Try again' });
    await h.settled();
    // The retry asked the model with both results in its history and ran neither call again.
    expect(h.invocations()).toHaveLength(2);
    const prompt = JSON.stringify(h.openai.requests.at(-1)!.body);
    expect(prompt).toContain('prod');
    expect(prompt.match(/"role":"tool"/g)).toHaveLength(2);
  });

  it('says it stopped at agent.maxSteps after the text the model wrote on the way, and Try again runs no call again', async () => {
    const h = await harness({ extraYaml: 'agent:\n  maxSteps: 2\n', statusDelayMs: 0 });
    // A model that comments as it works reaches the limit with text: that is no answer either.
    h.openai.enqueue(
      { text: 'Checking staging first.', toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] },
      { text: 'Now prod.', toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'check every namespace', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('I stopped after 2 steps without finishing')), { message: 'step-limit notice' });
    await h.settled();
    expect(h.invocations()).toHaveLength(2);
    // The commentary is shown as written, above the notice.
    const texts = threadReplies(h, threadTs).map((message) => message.text);
    const commentary = texts.findIndex((text) => text.includes('Checking staging first.') && text.includes('Now prod.'));
    expect(commentary, JSON.stringify(texts)).toBeGreaterThanOrEqual(0);
    expect(commentary).toBeLessThan(texts.indexOf(notice.text));

    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry');
    expect(retry).toBeDefined();
    h.openai.enqueue({ text: 'staging and prod both run pod-a.' });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'staging and prod both run pod-a.'), { message: 'answer after Try again' });
    await h.settled();
    expect(h.invocations()).toHaveLength(2);
    expect(JSON.stringify(h.openai.requests.at(-1)!.body).match(/"role":"tool"/g)).toHaveLength(2);
  });

  it('says the model returned no answer, with Try again that asks the model again', async () => {
    const h = await harness();
    h.openai.enqueue({ text: '' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello?', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('The model returned no answer')), { message: 'no-answer notice' });
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry');
    expect(retry).toBeDefined();

    h.openai.enqueue({ text: 'Hello! How can I help?' });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Hello! How can I help?'), { message: 'answer after Try again' });
    expect(h.openai.requests).toHaveLength(2);
    expect(JSON.stringify(h.openai.requests[1]!.body)).toContain('hello?');
  });
});

/**
 * The model's answer is not blank text, but its rendering is: an empty code block, a lone link
 * reference definition, `&nbsp;`. Taken for an answer, it posted nothing and no notice either: the
 * requester saw the bot go quiet under its "is thinking…" status (which only a post clears).
 */
describe('an answer whose rendering is empty', () => {
  const noAnswer = (h: Awaited<ReturnType<typeof harness>>, threadTs: string) =>
    waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('The model returned no answer')), { timeoutMs: 15_000, message: 'no-answer notice' });

  it.each([
    ['an empty code block', '```\n```'],
    ['a lone link reference definition', '[runbook]: https://runbooks.example.com/worker'],
    ['a non-breaking space entity', '&nbsp;'],
  ])('%s gets the no-answer notice after the status, and Try again asks the model again', async (_name, text) => {
    const h = await harness({ statusDelayMs: 0 });
    h.openai.enqueue({ text });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
    const notice = await noAnswer(h, threadTs);
    await h.settled();
    expect(threadReplies(h, threadTs).map((message) => message.text)).toEqual([notice.text]);
    // Slack clears the status when the bot posts: the notice comes after the last one.
    const methods = h.slack.calls.map((call) => call.method);
    expect(h.slack.callsTo('assistant.threads.setStatus').length).toBeGreaterThan(0);
    expect(methods.lastIndexOf('assistant.threads.setStatus')).toBeLessThan(methods.lastIndexOf('chat.postMessage'));

    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry');
    expect(retry).toBeDefined();
    h.openai.enqueue({ text: 'The worker is healthy.' });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'The worker is healthy.'), { message: 'answer after Try again' });
    expect(h.openai.requests).toHaveLength(2);
    // Asked again from the question, without the answer that showed nothing.
    expect(conversationOf(h.openai.requests[1]!).filter((entry) => entry.role !== 'system')).toEqual([expect.objectContaining({ role: 'user' })]);
  });

  it('removes what it streamed of it, then gets the notice', async () => {
    const h = await harness();
    // Slow enough that the stream opens: `[runbook]: ` is shown before the URL makes it a definition.
    h.openai.enqueue({ text: '[runbook]: https://runbooks.example.com/worker', deltaDelayMs: 400 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
    const notice = await noAnswer(h, threadTs);
    await h.settled();
    expect(h.slack.callsTo('chat.postMessage').filter((call) => call.args.thread_ts === threadTs && String(call.args.text).includes('[runbook]'))).toHaveLength(1);
    expect(threadReplies(h, threadTs).map((message) => message.text)).toEqual([notice.text]);
  }, 30_000);

  it('gets the notice in native streaming too', async () => {
    const h = await harness({ environment: { SLACK_STREAMING: 'native' } });
    h.openai.enqueue({ text: '```\n```', deltaDelayMs: 400 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
    await noAnswer(h, threadTs);
    await h.settled();
    expect(h.slack.callsTo('chat.startStream').length).toBeGreaterThan(0);
    expect(h.slack.callsTo('chat.stopStream')).toHaveLength(h.slack.callsTo('chat.startStream').length);
  }, 30_000);
});

