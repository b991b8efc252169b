import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { closeDanglingToolCalls, parseHistory, trimHistory } from './history.js';

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

  it('keeps the latest exchange even when it alone is over the cap', () => {
    expect(trimHistory(exchange(1), { maxMessages: 1, maxBytes: 10 })).toEqual(exchange(1));
  });

  it('rejects a tampered or malformed history as a whole', () => {
    expect(parseHistory([{ role: 'user', content: 'hi' }]).valid).toBe(true);
    expect(parseHistory([{ role: 'user', content: 'hi' }, { role: 'tool', content: [{ type: 'bogus' }] }])).toEqual({ messages: [], valid: false });
    expect(parseHistory('not an array').valid).toBe(false);
  });

  it('closes tool calls a dead process left without results', () => {
    const dangling: ModelMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'restart', input: {} }] },
    ];
    const closed = closeDanglingToolCalls(dangling, 'interrupted');
    expect(closed.at(-1)).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'restart', output: { type: 'execution-denied', reason: 'interrupted' } }],
    });
    expect(closeDanglingToolCalls(exchange(1), 'interrupted')).toEqual(exchange(1));
  });
});
