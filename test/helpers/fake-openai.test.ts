import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { conversationOf, startFakeOpenAI, type FakeOpenAI } from './fake-openai.js';

const lookupDeployment = tool({
  description: 'Look up a deployment',
  inputSchema: z.object({ name: z.string() }),
  execute: async ({ name }) => ({ name, replicas: 3 }),
});

describe('fake OpenAI driven by the real @ai-sdk/openai provider', () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
  });

  const apis: Array<{ api: 'chat' | 'responses'; model: () => LanguageModel }> = [
    { api: 'chat', model: () => createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).chat('gpt-4o-mini') },
    { api: 'responses', model: () => createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' })('gpt-4o-mini') },
  ];

  describe.each(apis)('$api API', ({ api, model }) => {
    it('answers a scripted text reply', async () => {
      fake.enqueue({ text: 'Hello from the fake.' });
      const result = await generateText({ model: model(), system: 'You are terse.', prompt: 'Say hi' });
      expect(result.text).toBe('Hello from the fake.');
      expect(result.response.modelId).toBe('gpt-4o-mini');
      expect(result.usage.inputTokens).toBeGreaterThan(0);
      const [request] = fake.requests;
      expect(request).toMatchObject({ api, path: api === 'chat' ? '/v1/chat/completions' : '/v1/responses' });
      expect(request?.headers.authorization).toBe('Bearer test');
      expect(conversationOf(request!)).toEqual([
        { role: 'system', text: 'You are terse.' },
        { role: 'user', text: 'Say hi' },
      ]);
    });

    it('runs a tool call and sends the tool result back on the next request', async () => {
      fake.enqueue({ toolCalls: [{ name: 'lookupDeployment', arguments: { name: 'payments-api' } }] }, { text: 'It has 3 replicas.' });
      const result = await generateText({
        model: model(),
        tools: { lookupDeployment },
        prompt: 'How many replicas does payments-api have?',
        stopWhen: stepCountIs(3),
      });
      expect(result.text).toBe('It has 3 replicas.');
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[0]?.body.tools).toHaveLength(1);
      expect(conversationOf(fake.requests[1]!)).toEqual([
        { role: 'user', text: 'How many replicas does payments-api have?' },
        { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'lookupDeployment', arguments: '{"name":"payments-api"}' }] },
        { role: 'tool', toolCallId: 'call_1', text: '{"name":"payments-api","replicas":3}' },
      ]);
    });

    it('streams text and tool calls through streamText', async () => {
      fake.enqueue(
        { text: 'Checking.', toolCalls: [{ id: 'call_custom', name: 'lookupDeployment', arguments: { name: 'payments-api' } }] },
        { text: 'payments-api runs 3 replicas right now.' },
      );
      const result = streamText({ model: model(), tools: { lookupDeployment }, prompt: 'replicas?', stopWhen: stepCountIs(3) });
      const deltas: string[] = [];
      for await (const delta of result.textStream) deltas.push(delta);
      expect(deltas.join('')).toBe('Checking.payments-api runs 3 replicas right now.');
      expect(deltas.length).toBeGreaterThan(2);
      expect(fake.requests[0]?.body.stream).toBe(true);
      expect(conversationOf(fake.requests[1]!).slice(1)).toEqual([
        { role: 'assistant', text: 'Checking.', toolCalls: [{ id: 'call_custom', name: 'lookupDeployment', arguments: '{"name":"payments-api"}' }] },
        { role: 'tool', toolCallId: 'call_custom', text: '{"name":"payments-api","replicas":3}' },
      ]);
    });

    it('surfaces a scripted error as an APICallError', async () => {
      fake.enqueue({ error: { status: 400, message: 'context_length_exceeded' } });
      const failure = await generateText({ model: model(), prompt: 'x', maxRetries: 0 }).catch((error: unknown) => error);
      expect(APICallError.isInstance(failure)).toBe(true);
      expect(failure).toMatchObject({ statusCode: 400, message: 'context_length_exceeded' });
    });
  });

  it('fails loudly when nothing is scripted', async () => {
    const model = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).chat('gpt-4o-mini');
    await expect(generateText({ model, prompt: 'x', maxRetries: 0 })).rejects.toThrow('fake-openai: no scripted reply');
  });

  it('uses a responder instead of the queue and can hang until aborted', async () => {
    const model = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).chat('gpt-4o-mini');
    fake.setResponder((request) => (conversationOf(request).at(-1)?.text === 'wait' ? { hang: true } : { text: 'echo' }));
    await expect(generateText({ model, prompt: 'hello' })).resolves.toMatchObject({ text: 'echo' });
    await expect(generateText({ model, prompt: 'wait', maxRetries: 0, abortSignal: AbortSignal.timeout(100) })).rejects.toThrow();
    await expect(fake.waitForRequests(2)).resolves.toHaveLength(2);
    await expect(fake.waitForRequests(3, { timeoutMs: 50 })).rejects.toThrow(/expected 3 model request\(s\) within 50 ms, got 2/);
  });

  it('closes promptly while a request hangs', async () => {
    const model = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).chat('gpt-4o-mini');
    fake.enqueue({ hang: true });
    const pending = generateText({ model, prompt: 'x', maxRetries: 0 }).catch((error: unknown) => error);
    await fake.waitForRequests(1);
    await fake.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});
