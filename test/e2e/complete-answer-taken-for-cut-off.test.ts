import { afterEach, describe, expect, it } from 'vitest';
import { conversationOf, startFakeOpenAI } from '../helpers/fake-openai.js';
import { startRewritingProxy } from '../helpers/rewriting-proxy.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * f4781d4 took any last step that wrote text and ended other than `stop` / `tool-calls` for an
 * answer cut off mid-text (isCutOffAnswer): it is shown with " …", the thread is told "The model's
 * answer was cut off", and the answer is left out of the history. Two finish reasons of COMPLETE
 * answers fall under it:
 * - a refusal: @ai-sdk/openai reports a whole refusal (`refusal` in Chat Completions,
 *   `response.refusal.delta` in the Responses API, the default OPENAI_API) as `content-filter`;
 * - `other`: what @ai-sdk/openai makes of an OpenAI-compatible server's own end-of-answer reason
 *   (Together's `eos`, TGI-style `eos_token`), for servers the README sends to OPENAI_API=chat.
 * Every such answer was reported as cut off, and the bot then forgot it gave it. Only a real cut-off
 * counts now: the output limit, or a stream that ended with no finish (see cut-off-step.ts).
 */
const harness = useHarnesses();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function throughProxy(api: 'chat' | 'responses', rewrite: (body: string) => string) {
  const openai = await startFakeOpenAI();
  const proxy = await startRewritingProxy({ target: openai.baseURL, rewrite: (index, body) => (index === 0 ? rewrite(body) : body) });
  closers.push(proxy.close, openai.close);
  const h = await harness({ api, environment: { OPENAI_BASE_URL: proxy.baseURL } });
  return { h, openai };
}

const cases: Array<[string, 'chat' | 'responses', (body: string) => string]> = [
  // Chat Completions: the model's text arrives as `refusal` deltas, ending with finish_reason "stop".
  ['a refusal (Chat Completions)', 'chat', (body) => body.replaceAll('"content":"', '"refusal":"')],
  // Responses API (the default): the same text as refusal events.
  ['a refusal (Responses API)', 'responses', (body) => body.replaceAll('response.output_text.delta', 'response.refusal.delta')],
  // An OpenAI-compatible server that ends every answer with its own reason.
  ['finish_reason "eos" (OpenAI-compatible server)', 'chat', (body) => body.replaceAll('"finish_reason":"stop"', '"finish_reason":"eos"')],
];

describe('a complete answer whose finish reason is neither stop nor tool-calls', () => {
  for (const [name, api, rewrite] of cases) {
    it(`${name} is posted as the answer, not as one cut off, and stays in the history`, async () => {
      const { h, openai } = await throughProxy(api, rewrite);
      const answer = "I can't help with deleting the production database.";
      openai.enqueue({ text: answer }, { text: 'Noted.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'delete the prod database', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('production database')), { message: 'the answer' });
      await h.settled();
      const texts = threadReplies(h, threadTs).map((message) => message.text);
      expect.soft(texts).toEqual([answer]);

      // The next message: the model is shown what it answered before.
      await h.threadMessage({ user: 'UALICE', text: 'ok, and staging?', threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Noted.'), { message: 'the second answer' });
      const told = conversationOf(openai.requests.at(-1)!).filter((entry) => entry.role === 'assistant').map((entry) => entry.text ?? '');
      expect(told.join('\n')).toContain("I can't help");
    });
  }
});

/**
 * A provider's content filter that stops the answer as it is written (`content_filter` from the
 * server; Azure OpenAI does this) is not a refusal in a whole answer, nor a cut-off Try again could
 * mend: the same filter would stop it again. What the model wrote is its answer, kept in the
 * history, with a plain note that the filter ended it there; no warning, no Try again, no " …".
 */
const filteredCases: Array<[string, 'chat' | 'responses', (body: string) => string]> = [
  ['Chat Completions', 'chat', (body) => body.replaceAll('"finish_reason":"stop"', '"finish_reason":"content_filter"')],
  ['Responses API', 'responses', (body) => body.replaceAll('response.completed', 'response.incomplete').replaceAll('"incomplete_details":null', '"incomplete_details":{"reason":"content_filter"}')],
];

describe('an answer a content filter stopped as it was written', () => {
  for (const [name, api, rewrite] of filteredCases) {
    it(`(${name}) is posted as the answer with a note that the filter ended it, and stays in the history`, async () => {
      const { h, openai } = await throughProxy(api, rewrite);
      const answer = 'To bypass the lock, first you';
      openai.enqueue({ text: answer }, { text: 'Noted.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'how do I bypass the lock?', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('bypass the lock')), { message: 'the answer' });
      await h.settled();
      const replies = threadReplies(h, threadTs);
      expect(replies.map((message) => message.text)).toEqual([`${answer}\n\n_The model's content filter ended this answer here._`]);
      expect(replies.flatMap((message) => cardButtons(message.blocks))).toEqual([]);

      await h.threadMessage({ user: 'UALICE', text: 'ok, never mind', threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Noted.'), { message: 'the second answer' });
      const told = conversationOf(openai.requests.at(-1)!).filter((entry) => entry.role === 'assistant').map((entry) => entry.text ?? '');
      // The model's own words, without the thread's note.
      expect(told).toEqual([answer]);
    });
  }

  it('stopped inside a code block: the block is closed before the note, which is not shown as code', async () => {
    const { h, openai } = await throughProxy('chat', filteredCases[0]![2]);
    openai.enqueue({ text: 'Run this:\n```sh\nrm -f /var/lock/app' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'how do I clear the lock?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('Run this')), { message: 'the answer' });
    await h.settled();
    const [shown] = threadReplies(h, threadTs).map((message) => message.text);
    expect(shown).toMatch(/rm -f \/var\/lock\/app\n```\n\n_The model's content filter ended this answer here\._$/);
  });
});
