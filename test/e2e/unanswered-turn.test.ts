import { describe, expect, it } from 'vitest';
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
