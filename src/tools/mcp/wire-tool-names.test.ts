import { generateText, stepCountIs, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { wireToolName, withWireToolNames } from './wire-tool-names.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

describe('wireToolName', () => {
  it('keeps names model APIs accept and rewrites the others stably', () => {
    expect(wireToolName('restart_service')).toBe('restart_service');
    expect(wireToolName('ask_user')).toBe('ask_user');
    expect(wireToolName('fs.read_file')).toBe('fs__read_file');
    expect(wireToolName('gh.repos.get')).toBe('gh__repos__get');
    expect(wireToolName('odd.name with/slash')).toBe('odd__name_with_slash');
    const long = `server.${'x'.repeat(80)}`;
    expect(wireToolName(long)).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(wireToolName(long)).toBe(wireToolName(long));
    expect(wireToolName(long)).not.toBe(wireToolName(`${long}y`));
  });
});

describe('withWireToolNames', () => {
  it('sends dotted names as wire names and maps the model calls back, in generate and in history', async () => {
    const ran: unknown[] = [];
    const inner = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'fs__read_file', input: JSON.stringify({ path: '/a' }) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
      ],
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'read /a' }];
    const result = await generateText({
      model: withWireToolNames(inner),
      messages,
      tools: {
        'fs.read_file': tool({ inputSchema: z.object({ path: z.string() }), execute: async (input) => (ran.push(input), 'contents') }),
        ask_user: tool({ inputSchema: z.object({ question: z.string() }) }),
      },
      stopWhen: stepCountIs(3),
    });

    expect(ran).toEqual([{ path: '/a' }]);
    expect(result.text).toBe('done');
    const [first, second] = inner.doGenerateCalls;
    expect(first!.tools?.map((candidate) => ('name' in candidate ? candidate.name : ''))).toEqual(['fs__read_file', 'ask_user']);
    // The history the bot stores keeps the bot's names; the model sees its own wire names.
    expect(JSON.stringify(result.responseMessages)).toContain('"toolName":"fs.read_file"');
    expect(JSON.stringify(result.responseMessages)).not.toContain('fs__read_file');
    const prompt = JSON.stringify(second!.prompt);
    expect(prompt).toContain('"toolName":"fs__read_file"');
    expect(prompt).not.toContain('fs.read_file');
  });

  it('renames a forced tool choice', async () => {
    const inner = new MockLanguageModelV4({ doGenerate: { content: [], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] } });
    const model = withWireToolNames(inner);
    if (typeof model === 'string') throw new Error('expected a model object');
    await model.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      tools: [{ type: 'function', name: 'fs.read_file', inputSchema: { type: 'object' } }],
      toolChoice: { type: 'tool', toolName: 'fs.read_file' },
    });
    expect(inner.doGenerateCalls[0]!.toolChoice).toEqual({ type: 'tool', toolName: 'fs__read_file' });
  });

  it('maps streamed tool calls back too', async () => {
    const inner = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream({
          start(controller) {
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'tool-input-start', id: 'c1', toolName: 'fs__read_file' });
            controller.enqueue({ type: 'tool-input-delta', id: 'c1', delta: '{"path":"/a"}' });
            controller.enqueue({ type: 'tool-input-end', id: 'c1' });
            controller.enqueue({ type: 'tool-call', toolCallId: 'c1', toolName: 'fs__read_file', input: '{"path":"/a"}' });
            controller.enqueue({ type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage });
            controller.close();
          },
        }),
      }),
    });
    const model = withWireToolNames(inner);
    if (typeof model === 'string') throw new Error('expected a model object');
    const { stream } = await model.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      tools: [{ type: 'function', name: 'fs.read_file', inputSchema: { type: 'object' } }],
    });
    const parts: Array<{ type: string; toolName?: string }> = [];
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
    expect(parts.filter((part) => part.toolName !== undefined).map((part) => part.toolName)).toEqual(['fs.read_file', 'fs.read_file']);
  });
});
