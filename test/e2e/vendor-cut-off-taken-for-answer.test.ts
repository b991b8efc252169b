import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { startRewritingProxy } from '../helpers/rewriting-proxy.js';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * d033c2d: `other` with any raw finish reason from the server is now taken for "the model's own
 * end" (isCutOffAnswer), to let `eos` through. But OpenAI-compatible servers the README sends to
 * OPENAI_API=chat also report REAL cut-offs with reasons of their own, which @ai-sdk/openai maps to
 * `other` too: Mistral's `model_length` (the answer hit the model's context length) and DeepSeek's
 * `insufficient_system_resource` (the answer was interrupted for lack of inference resources).
 * Before d033c2d such an answer was shown as cut off (" …", notice, Try again, not kept); now the
 * half answer is posted as a whole one and kept in the history as what the bot said.
 */
const harness = useHarnesses();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

describe('an answer an OpenAI-compatible server reports as cut off with a reason of its own', () => {
  for (const reason of ['model_length', 'insufficient_system_resource']) {
    it(`finish_reason "${reason}" is shown as cut off, not as a whole answer`, async () => {
      const openai = await startFakeOpenAI();
      const proxy = await startRewritingProxy({ target: openai.baseURL, rewrite: (index, body) => (index === 0 ? body.replaceAll('"finish_reason":"stop"', `"finish_reason":"${reason}"`) : body) });
      closers.push(proxy.close, openai.close);
      const h = await harness({ api: 'chat', environment: { OPENAI_BASE_URL: proxy.baseURL } });
      openai.enqueue({ text: 'To restore the database, first stop the writers, then' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'how do I restore the db?', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('restore the database')), { message: 'the answer' });
      await h.settled();
      const texts = threadReplies(h, threadTs).map((message) => message.text);
      expect(texts.some((text) => text.includes("answer was cut off")), JSON.stringify(texts)).toBe(true);
    });
  }
});
