import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { withUniqueToolCallIds } from './unique-tool-call-ids.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** How the Responses API provider streams a function call: announced, its arguments, then the call. */
function streamedCall(id: string, toolName: string, input: string): LanguageModelV4StreamPart[] {
  return [
    { type: 'tool-input-start', id, toolName },
    { type: 'tool-input-delta', id, delta: input },
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName, input },
  ];
}

async function streamThrough(parts: LanguageModelV4StreamPart[], prompt: LanguageModelV4CallOptions['prompt'] = [], options: { freshIds?: boolean } = {}): Promise<LanguageModelV4StreamPart[]> {
  const model = withUniqueToolCallIds(new MockLanguageModelV4({ doStream: async () => ({ stream: convertArrayToReadableStream(parts) }) }), options) as LanguageModelV4;
  const { stream } = await model.doStream({ prompt });
  const read: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) read.push(part);
  return read;
}

const idOf = (part: LanguageModelV4StreamPart): string | undefined => ('toolCallId' in part ? part.toolCallId : 'id' in part ? part.id : undefined);

describe('withUniqueToolCallIds', () => {
  it('gives the second of two calls in one response that share an id its own, on all of its parts', async () => {
    const parts = await streamThrough([
      ...streamedCall('call_1', 'scale_down', '{"service":"worker"}'),
      ...streamedCall('call_1', 'delete_deployment', '{"service":"payments"}'),
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
    ]);
    const first = parts.slice(0, 4).map(idOf);
    const second = parts.slice(4, 8).map(idOf);
    expect(first).toEqual(['call_1', 'call_1', 'call_1', 'call_1']);
    expect(new Set(second).size).toBe(1);
    expect(second[0]).toMatch(/^call_[0-9a-f]{24}$/);
    expect(parts[7]).toMatchObject({ type: 'tool-call', toolName: 'delete_deployment', input: '{"service":"payments"}' });
  });

  it('renames a call whose id the prompt already holds, and leaves new ids alone', async () => {
    const prompt: LanguageModelV4CallOptions['prompt'] = [
      { role: 'user', content: [{ type: 'text', text: 'list pods' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'get_pods', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_pods', output: { type: 'text', value: 'pod-a' } }] },
    ];
    const parts = await streamThrough([{ type: 'tool-call', toolCallId: 'call_1', toolName: 'get_pods', input: '{}' }, { type: 'tool-call', toolCallId: 'call_2', toolName: 'get_pods', input: '{}' }], prompt);
    expect(idOf(parts[0]!)).not.toBe('call_1');
    expect(idOf(parts[1]!)).toBe('call_2');
  });

  it('gives every call a fresh id once the history no longer holds all the ids the thread used (trimmed)', async () => {
    // `call_1` is not in the prompt, but an exchange trimmed from the history may have used it.
    const parts = await streamThrough([...streamedCall('call_1', 'deploy', '{"replicas":3}'), { type: 'tool-call', toolCallId: 'call_2', toolName: 'deploy', input: '{}' }], [], { freshIds: true });
    const streamed = parts.slice(0, 4).map(idOf);
    expect(new Set(streamed).size).toBe(1);
    expect(streamed[0]).toMatch(/^call_[0-9a-f]{24}$/);
    expect(idOf(parts[4]!)).toMatch(/^call_[0-9a-f]{24}$/);
    expect(idOf(parts[4]!)).not.toBe(streamed[0]);
  });
});
