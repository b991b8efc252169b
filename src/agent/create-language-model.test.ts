import { streamText } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/helpers/fake-openai.js';
import { createLanguageModel } from './create-language-model.js';

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function answerOf(api: 'responses' | 'chat', maxRetries: number): Promise<string> {
  if (!fake) throw new Error('no fake');
  const model = createLanguageModel({ apiKey: 'sk-test', baseUrl: fake.baseURL, model: 'gpt-test', api });
  const result = streamText({ model, prompt: 'restart the worker', maxRetries });
  let text = '';
  for await (const part of result.fullStream) {
    if (part.type === 'error') throw part.error;
    if (part.type === 'text-delta') text += part.text;
  }
  return text;
}

describe('the model client', () => {
  // Each retry waits the AI SDK's back-off (2 s), so one API is enough here.
  it('asks again when the connection drops without an answer', async () => {
    fake = await startFakeOpenAI();
    fake.enqueue({ drop: true }, { text: 'Restarted.' });
    expect(await answerOf('responses', 2)).toBe('Restarted.');
    expect(fake.requests).toHaveLength(2);
  });

  it('fails the call when every attempt drops', async () => {
    fake = await startFakeOpenAI();
    fake.enqueue({ drop: true }, { drop: true });
    await expect(answerOf('responses', 1)).rejects.toThrow(/fetch failed|Cannot connect/);
    expect(fake.requests).toHaveLength(2);
  });
});
