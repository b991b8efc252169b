import { modelMessageSchema, type ModelMessage } from 'ai';
import { describe, expect, it, vi } from 'vitest';
import { parseHistory, trimHistory } from './history.js';
import { createValidatedMessages } from './validated-messages.js';

const exchange = (index: number): ModelMessage[] => [
  { role: 'user', content: `question ${index} ${'x'.repeat(100)}` },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${index}`, toolName: 'get_pods', input: {} }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${index}`, toolName: 'get_pods', output: { type: 'text', value: 'ok' } }] },
  { role: 'assistant', content: `answer ${index}` },
];

describe('history', () => {
  it('drops whole old exchanges to fit, never separating a tool call from its result', () => {
    const messages = [1, 2, 3, 4, 5].flatMap(exchange);
    const trimmed = trimHistory(messages, { maxMessages: 9, maxBytes: 1_000_000 });
    expect(trimmed).toEqual([4, 5].flatMap(exchange));
    const bySize = trimHistory(messages, { maxMessages: 1000, maxBytes: 700 });
    expect(bySize[0]).toMatchObject({ role: 'user' });
    expect(Buffer.byteLength(JSON.stringify(bySize))).toBeLessThanOrEqual(700);
  });

  it('trims to exactly what measuring the whole history after each cut gives, multi-byte text included', () => {
    // The rule, stated directly: of the places a cut may start (the first message, any later user
    // message), the earliest whose rest fits both caps, measured whole; the last one if none fits.
    const reference = (messages: ModelMessage[], limits: { maxMessages: number; maxBytes: number }) => {
      const starts = messages.flatMap((message, index) => (index === 0 || message.role === 'user' ? [index] : []));
      const fits = (start: number) => messages.length - start <= limits.maxMessages && Buffer.byteLength(JSON.stringify(messages.slice(start))) <= limits.maxBytes;
      return messages.slice(starts.find(fits) ?? starts.at(-1) ?? 0);
    };
    const messages = [1, 2, 3, 4, 5, 6].flatMap((index) => [
      ...exchange(index),
      { role: 'user', content: `ünïcødé ${'€'.repeat(index * 7)}` },
      { role: 'assistant', content: '🙂'.repeat(index) },
    ] satisfies ModelMessage[]);
    const whole = Buffer.byteLength(JSON.stringify(messages));
    for (let maxBytes = 0; maxBytes <= whole + 1; maxBytes += 1) {
      for (const maxMessages of [1, 5, 13, 1000]) {
        expect(trimHistory(messages, { maxMessages, maxBytes })).toEqual(reference(messages, { maxMessages, maxBytes }));
      }
    }
  });

  it('keeps the latest exchange even when it alone is over the cap', () => {
    expect(trimHistory(exchange(1), { maxMessages: 1, maxBytes: 10 })).toEqual(exchange(1));
    expect(trimHistory([], { maxMessages: 0, maxBytes: 0 })).toEqual([]);
  });

  it('rejects a tampered or malformed history as a whole', () => {
    expect(parseHistory([{ role: 'user', content: 'hi' }]).valid).toBe(true);
    expect(parseHistory([{ role: 'user', content: 'hi' }, { role: 'tool', content: [{ type: 'bogus' }] }])).toEqual({ messages: [], valid: false });
    expect(parseHistory('not an array').valid).toBe(false);
  });

  it('validates a message once: a history loaded again costs only its new messages, and a changed message is validated anew', () => {
    const validated = createValidatedMessages({ maxCharacters: 1_000_000 });
    const validate = vi.spyOn(modelMessageSchema, 'safeParse');
    try {
      const stored = () => JSON.parse(JSON.stringify([1, 2].flatMap(exchange))) as unknown[];
      expect(parseHistory(stored(), validated).valid).toBe(true);
      expect(validate).toHaveBeenCalledTimes(8);
      validate.mockClear();
      // Read again from the store (new objects, the same JSON), with one new message appended.
      expect(parseHistory([...stored(), { role: 'user', content: 'and now?' }], validated).valid).toBe(true);
      expect(validate).toHaveBeenCalledTimes(1);
      // The same message with a field changed is not the message that was found valid.
      const tampered = stored();
      tampered[2] = { role: 'tool', content: [{ type: 'bogus', toolCallId: 'c1' }] };
      expect(parseHistory(tampered, validated)).toEqual({ messages: [], valid: false });
    } finally {
      validate.mockRestore();
    }
  });

  it('forgets the oldest validated messages past its budget', () => {
    const validated = createValidatedMessages({ maxCharacters: 10 });
    validated.add('aaaa');
    validated.add('bbbb');
    // Seen again: young again.
    expect(validated.has('aaaa')).toBe(true);
    validated.add('cccc');
    expect(validated.has('bbbb')).toBe(false);
    expect(validated.has('aaaa')).toBe(true);
    expect(validated.has('cccc')).toBe(true);
    // Larger than the whole budget: never kept.
    validated.add('x'.repeat(11));
    expect(validated.has('x'.repeat(11))).toBe(false);
  });
});
