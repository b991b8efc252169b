import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { startRewritingProxy } from '../helpers/rewriting-proxy.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

/** The harness's model requests go through a proxy that rewrites the chosen answers' finish reason, as vLLM, Ollama or LiteLLM end a response at the output limit. */
async function harnessWithFinishReason(finishReasons: Record<number, string>) {
  const openai = await startFakeOpenAI();
  const proxy = await startRewritingProxy({
    target: openai.baseURL,
    rewrite: (index, body) => (finishReasons[index] === undefined ? body : body.replaceAll('"finish_reason":"tool_calls"', `"finish_reason":"${finishReasons[index]}"`)),
  });
  closers.push(proxy.close, openai.close);
  const h = await harness({ environment: { OPENAI_BASE_URL: proxy.baseURL }, statusDelayMs: 0 });
  return { h, openai };
}

async function cutOffNotice(h: Harness, threadTs: string) {
  const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes(':warning:')), { message: 'a notice' });
  await h.settled();
  const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry');
  expect(retry, notice.text).toBeDefined();
  return { notice, retry: retry! };
}

const ephemeralTexts = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call: any) => call.args?.text ?? call.body?.text ?? JSON.stringify(call));

describe('a step the model ended with finish reason "length" while calling tools', () => {
  it('says the response was cut off, runs nothing, and Try again asks the model again', async () => {
    const { h, openai } = await harnessWithFinishReason({ 0: 'length' });
    // The model hit its output limit after writing one complete call: the AI SDK runs no tool of such a step.
    openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'what runs in staging?', ts: threadTs });
    const { notice, retry } = await cutOffNotice(h, threadTs);
    expect(notice.text).toContain('cut off (finish reason `length`');
    expect(h.invocations()).toEqual([]);

    openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] }, { text: 'staging runs pod-a.' });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await h.settled();
    // Before the fix: ['There is nothing to retry here any more.'] and the model is not asked again.
    expect(ephemeralTexts(h)).toEqual([]);
    expect(openai.requests).toHaveLength(3);
    expect(threadReplies(h, threadTs).some((message) => message.text === 'staging runs pod-a.')).toBe(true);
    // The retry told the model the first call never ran; the call it then asked for ran once.
    expect(JSON.stringify(openai.requests[1]!.body)).toContain("Not run: the model's response was cut off (finish reason length)");
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'staging']]);
  });

  it('a complete call beside a cut-off one: Try again does not fail the same way again', async () => {
    const { h, openai } = await harnessWithFinishReason({ 0: 'length' });
    // The second call was cut off by the limit (its arguments are not JSON); the first is whole.
    openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }, { name: 'get_pods', arguments: '{"namespace":"pr' }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'what runs in staging and prod?', ts: threadTs });
    const { notice, retry } = await cutOffNotice(h, threadTs);
    openai.enqueue({ text: 'staging runs pod-a.' });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await h.settled();
    const replies = threadReplies(h, threadTs).map((message) => message.text);
    // Before the fix: ':warning: Sorry, I could not finish this: the model request failed (Tool result is missing for tool call call_1.)…', the model never asked.
    expect(replies.filter((text) => text.includes(':warning:')), JSON.stringify(replies)).toHaveLength(1);
    expect(replies).toContain('staging runs pod-a.');
    expect(openai.requests).toHaveLength(2);
    expect(h.invocations()).toEqual([]);
  });

  it('posts no card for a call needing approval beside one that never ran; after Try again the approved call runs once', async () => {
    const { h, openai } = await harnessWithFinishReason({ 0: 'length' });
    const calls = [
      { name: 'get_pods', arguments: { namespace: 'prod' } },
      { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } },
    ];
    openai.enqueue({ toolCalls: calls });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api in prod if its pods are stuck', ts: threadTs });
    const { notice, retry } = await cutOffNotice(h, threadTs);
    // Before the fix a card was posted; once approved, the resumed turn failed "Tool result is missing for tool call call_1.", again at every Try again.
    expect(threadReplies(h, threadTs).filter((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve'))).toEqual([]);
    expect(h.invocations()).toEqual([]);

    openai.enqueue({ toolCalls: calls });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve')), { message: 'approval card' });
    await h.settled();
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    openai.enqueue({ text: 'Restarted api in prod.' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted api in prod.'), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([
      ['get', 'pods', '-n', 'prod'],
      ['rollout', 'restart', 'deployment/api', '-n', 'prod'],
    ]);
    const replies = threadReplies(h, threadTs).map((message) => message.text);
    expect(replies.filter((text) => text.includes(':warning:')), JSON.stringify(replies)).toHaveLength(1);
    expect(openai.requests).toHaveLength(3);
  });
});
