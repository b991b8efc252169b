import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { LanguageModel } from 'ai';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type GeneratedReply, mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { startFakeMcpHttpServer, type FakeMcpHttpServer } from '../../test/fixtures/mcp-http-server.js';
import { defaultConfig, parseConfigFile } from '../config/config-file.js';
import { createMcpServer, type McpServerHandle } from '../tools/mcp/mcp-server.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { runTurn } from './run-turn.js';

/**
 * turn-telemetry.ts: "Prompts and outputs are not recorded: threads and tool output can hold
 * secrets, and the spans go to whatever backend the operator runs". A failing tool's error text is
 * its output (an MCP tool answering `isError`, a command's error), and the model's errors quote
 * what it wrote, so their spans say only what kind of failure it was.
 */
let fake: FakeMcpHttpServer | undefined;
let handle: McpServerHandle | undefined;
afterEach(async () => {
  await handle?.close();
  await fake?.close();
});

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
const secretOutput = 'query failed after 2 rows: alice 078-05-1120 | bob 219-09-9999; connection string postgres://app:Pg-SECRET-88@db/prod';

function callReply(toolName: string, input: unknown): GeneratedReply {
  return { content: [{ type: 'tool-call', toolCallId: 'c1', toolName, input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] };
}
const doneReply: GeneratedReply = { content: [{ type: 'text', text: 'The query failed.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };

/** Runs one turn with an in-memory exporter and returns its finished spans. */
async function tracedTurn(options: { model: LanguageModel; definitions: readonly ToolDefinition[] }): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  await runTurn({
    model: options.model,
    instructions: 'test',
    definitions: options.definitions,
    policy: defaultConfig().policy,
    messages: [{ role: 'user', content: 'list customers' }],
    context: { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' },
    maxSteps: 5,
    maxRetries: 0,
    tracer: provider.getTracer('test'),
  }).catch(() => {});
  return exporter.getFinishedSpans();
}

/** Everything a span sends to the backend besides its name and ids. */
const recorded = (span: ReadableSpan) => JSON.stringify({ attributes: span.attributes, status: span.status, events: span.events });

describe('spans of failing tool and model calls', () => {
  it('execute_tool of an MCP tool that reports an error carries neither its output nor the exception', async () => {
    fake = await startFakeMcpHttpServer([
      {
        name: 'query',
        inputSchema: { type: 'object', properties: { sql: { type: 'string' } } },
        annotations: { readOnlyHint: true },
        handle: () => {
          throw new Error(secretOutput);
        },
      },
    ]);
    const config = Object.values(parseConfigFile(`mcpServers:\n  db:\n    url: ${fake.url}\n    trustReadOnlyHint: true\n`, 'test.yml').mcpServers!)[0]!;
    handle = createMcpServer({ name: 'db', config, env: {}, logger: pino({ level: 'silent' }), problems: [], onToolsChanged: () => {}, onProblem: () => {}, onRecovered: () => {} });
    await handle.start();
    const definitions = handle.tools();
    expect(definitions.map((tool) => tool.name)).toEqual(['db.query']);

    const spans = await tracedTurn({ model: mockStreamingModel([callReply('db.query', { sql: 'select * from customers' }), doneReply]), definitions });
    expect(fake.calls).toHaveLength(1);

    const span = spans.find((candidate) => candidate.name === 'execute_tool db.query');
    expect(span).toBeDefined();
    expect(recorded(span!)).not.toContain('078-05-1120');
    expect(recorded(span!)).not.toContain('Pg-SECRET-88');
    // Still failed, and of what kind.
    expect(span!.status).toEqual({ code: 2, message: 'tool failed' });
    expect(span!.attributes['error.type']).toBe('Error');
    expect(span!.events).toEqual([]);
  }, 20_000);

  it('execute_tool of a command that exits non-zero says the exit code, not what it printed', async () => {
    const command: ToolDefinition = {
      name: 'psql',
      description: 'Run a query',
      inputSchema: z.object({ sql: z.string() }),
      approval: 'never',
      execute: async () => ({ exitCode: 3, stdout: '', stderr: secretOutput, error: secretOutput }),
    };
    const spans = await tracedTurn({ model: mockStreamingModel([callReply('psql', { sql: 'select 1' }), doneReply]), definitions: [command] });
    const span = spans.find((candidate) => candidate.name === 'execute_tool psql')!;
    expect(span.status).toEqual({ code: 2, message: 'exit code 3' });
    expect(span.attributes['error.type']).toBe('exit_code');
    expect(recorded(span)).not.toContain('Pg-SECRET-88');
  });

  // The AI SDK already hands integrations a generic error when outputs are not recorded; this keeps it so.
  it('chat of a failing model call is failed without the error message', async () => {
    const model = mockStreamingModel(() => {
      throw new TypeError(`could not parse the tool input: ${secretOutput}`);
    });
    const spans = await tracedTurn({ model, definitions: [] });
    const span = spans.find((candidate) => candidate.name.startsWith('chat '))!;
    expect(span.status).toEqual({ code: 2, message: 'model call failed' });
    expect(recorded(span)).not.toContain('Pg-SECRET-88');
  });
});
