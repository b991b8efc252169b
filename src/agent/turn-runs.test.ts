import type { LanguageModelV4Content } from '@ai-sdk/provider';
import type { ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { inputHash } from '../approvals/input-version.js';
import { defaultConfig } from '../config/config-file.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { runTurn, TurnFailedError } from './run-turn.js';
import { createTurnTools, type ExecutionRecord, type ExecutionReport } from './tool-set.js';
import { createTurnRuns, TURN_CLOSED_TEXT, TurnClosedError } from './turn-runs.js';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };

function pageTool(log: string[]): ToolDefinition {
  return {
    name: 'page',
    description: 'Page the on-call engineer',
    inputSchema: z.object({ team: z.string() }),
    approval: 'never',
    execute: async () => {
      log.push('ran');
      return { paged: true };
    },
  };
}

describe('a turn that fails while the AI SDK runs its calls', () => {
  it('waits for a call under way and reports it, so the failure records every call that ran', async () => {
    // A provider `error` part between a call and the step's finish: the SDK still runs the call.
    const model = mockStreamingModel({
      content: [
        { type: 'tool-call', toolCallId: 'c1', toolName: 'page', input: JSON.stringify({ team: 'db' }) },
        // Not content, but the stream helper passes it through as the stream part it is.
        { type: 'error', error: new Error('unreadable chunk') } as unknown as LanguageModelV4Content,
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    });
    const log: string[] = [];
    const failure = await runTurn({
      model,
      instructions: 'test',
      definitions: [pageTool(log)],
      policy: defaultConfig().policy,
      messages: [{ role: 'user', content: 'page the db on-call' }],
      context,
      maxSteps: 5,
      maxRetries: 0,
      // A marker write that takes a while: the call is under way when the turn sees the error.
      beforeExecute: async () => {
        log.push('marker');
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TurnFailedError);
    // A call whose marker was written is in the failure's record: it ran, or (closed as it started) it says it did not.
    const { executions } = failure as TurnFailedError;
    expect(executions.map((execution) => execution.toolCallId)).toEqual(log.includes('marker') ? ['c1'] : []);
    expect(executions.filter((execution) => 'output' in execution && execution.output !== TURN_CLOSED_TEXT).length > 0).toBe(log.includes('ran'));
  });
});

/** The page tool's execute, as the AI SDK calls it. */
function executeOf(tools: ToolSet): (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown> {
  return tools.page!.execute as never;
}

describe('the tools of a closed turn', () => {
  const options = { toolCallId: 'c1', messages: [] };

  it('start no call: no marker, no record', async () => {
    const log: string[] = [];
    const executions: ExecutionRecord[] = [];
    const runs = createTurnRuns();
    const bases = new Map([['c1', { toolName: 'page', modelInputHash: inputHash({ team: 'db' }), basis: { kind: 'no-approval-needed' as const } }]]);
    const tools = createTurnTools({ definitions: [pageTool(log)], context, executions, bases, runs, beforeExecute: async () => void log.push('marker') });
    await runs.close();
    await expect(executeOf(tools)({ team: 'db' }, options)).rejects.toBeInstanceOf(TurnClosedError);
    expect(log).toEqual([]);
    expect(executions).toEqual([]);
  });

  it('answer "not run" for a call whose marker was written as the turn closed, and wait for it', async () => {
    const log: string[] = [];
    const executions: ExecutionRecord[] = [];
    const reports: ExecutionReport[] = [];
    const runs = createTurnRuns();
    let closing: Promise<void> | undefined;
    const bases = new Map([['c1', { toolName: 'page', modelInputHash: inputHash({ team: 'db' }), basis: { kind: 'no-approval-needed' as const } }]]);
    const tools = createTurnTools({
      definitions: [pageTool(log)],
      context,
      executions,
      bases,
      runs,
      beforeExecute: async () => {
        log.push('marker');
        closing = runs.close();
      },
      afterExecute: (report) => void reports.push(report),
    });
    await expect(executeOf(tools)({ team: 'db' }, options)).rejects.toThrow(TURN_CLOSED_TEXT);
    await closing;
    expect(log).toEqual(['marker']);
    expect(executions).toEqual([{ toolCallId: 'c1', toolName: 'page', input: { team: 'db' }, output: TURN_CLOSED_TEXT, started: false }]);
    expect(reports).toMatchObject([{ toolCallId: 'c1', status: 'error', error: TURN_CLOSED_TEXT }]);
  });
});
