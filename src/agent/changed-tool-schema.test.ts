import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { decidedStep } from '../approvals/pending-step.test-support.js';
import { defaultConfig } from '../config/config-file.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { approvedRunsFor } from './approved-runs.js';
import { resumeToolMessage } from './decision-messages.js';
import { runTurn } from './run-turn.js';
import type { ExecutionReport, StartingCall } from './tool-set.js';

/**
 * A turn paused on a card under one release and resumed by the next, whose tool schema changed in
 * between (a parameter added with a default, one removed, a limit tightened). What was approved no
 * longer fits the tool as it is now: it must not run, and the model and the audit trail hear "not
 * run", not the model's own invalid input.
 */
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const callReply = (id: string, name: string, input: object) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});
const textReply = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };
const policy = defaultConfig().policy;

function tool(name: string, inputSchema: z.ZodType, executed: unknown[]): ToolDefinition {
  return {
    name,
    description: name,
    inputSchema,
    approval: 'always',
    execute: async (input) => {
      executed.push(input);
      return { done: true };
    },
  };
}

/** A TypeScript tool (`defineTool`) as two releases define it: the new one caps replicas at 20. */
const scaleTool = (max: number, executed: unknown[]) => tool('scale_worker', z.object({ replicas: z.number().int().min(0).max(max) }), executed);

/** Paused under `before` with the model's call, approved by Bob (with `edit`, if given), resumed under `after`. */
async function resumedAfterDeploy(options: { before: ToolDefinition; after: ToolDefinition; modelInput: object; edit?: object; resumedModel: ReturnType<typeof mockStreamingModel> }) {
  const messages: ModelMessage[] = [{ role: 'user', content: 'please' }];
  const paused = await runTurn({ model: mockStreamingModel([callReply('c1', options.before.name, options.modelInput)]), instructions: 't', definitions: [options.before], policy, messages, context, maxSteps: 5 });
  const request = paused.approvalRequests[0]!;
  const step = decidedStep(paused.approvalRequests, { [request.approvalId]: { outcome: 'approved', userId: 'UBOB' } }, options.edit ? { [request.approvalId]: options.edit } : {});
  const started: StartingCall[] = [];
  const finished: ExecutionReport[] = [];
  const outcome = await runTurn({
    model: options.resumedModel,
    instructions: 't',
    definitions: [options.after],
    policy,
    messages: [...messages, ...paused.responseMessages, resumeToolMessage(step)],
    context,
    maxSteps: 5,
    approvedRuns: approvedRunsFor(step),
    beforeExecute: async (call) => void started.push(call),
    afterExecute: (report) => void finished.push(report),
  });
  const toolResults = options.resumedModel.doStreamCalls[0]!.prompt.flatMap((message) => (message.role === 'tool' ? message.content : [])).filter((part) => part.type === 'tool-result');
  return { outcome, started, finished, toolResult: JSON.stringify(toolResults.find((part) => part.toolCallId === 'c1')?.output) };
}

const NOT_RUN = (toolName: string) => `Not run: \`${toolName}\`'s parameters changed since this was approved; nothing was run.`;

describe('an approved call resumed by a release whose tool schema changed', () => {
  it('a parameter added with a default: not run, told to the model and the audit trail as not run, nothing started', async () => {
    const executed: unknown[] = [];
    const before = tool('restart_service', z.object({ service: z.string() }), executed);
    const after = tool('restart_service', z.object({ service: z.string(), timeout: z.number().int().default(60) }), executed);
    const { outcome, started, finished, toolResult } = await resumedAfterDeploy({ before, after, modelInput: { service: 'worker' }, resumedModel: mockStreamingModel([textReply('It was not restarted.')]) });
    expect(executed).toEqual([]);
    expect(started).toEqual([]);
    expect(finished).toEqual([expect.objectContaining({ toolCallId: 'c1', toolName: 'restart_service', status: 'error', error: expect.stringContaining(NOT_RUN('restart_service')) })]);
    expect(toolResult).toContain(NOT_RUN('restart_service'));
    expect(toolResult).not.toContain('InvalidToolInputError');
    expect(outcome.text).toBe('It was not restarted.');
  });

  it('a parameter removed: not run', async () => {
    const executed: unknown[] = [];
    const before = tool('restart_service', z.object({ service: z.string(), force: z.boolean() }), executed);
    const after = tool('restart_service', z.strictObject({ service: z.string() }), executed);
    const { finished, toolResult } = await resumedAfterDeploy({ before, after, modelInput: { service: 'worker', force: true }, resumedModel: mockStreamingModel([textReply('ok')]) });
    expect(executed).toEqual([]);
    expect(finished).toEqual([expect.objectContaining({ toolCallId: 'c1', status: 'error', error: expect.stringContaining(NOT_RUN('restart_service')) })]);
    expect(toolResult).toContain(NOT_RUN('restart_service'));
  });

  it('an unchanged schema runs the approved call as before', async () => {
    const executed: unknown[] = [];
    const schema = z.object({ service: z.string(), timeout: z.number().int().default(60) });
    const { started, finished } = await resumedAfterDeploy({ before: tool('restart_service', schema, executed), after: tool('restart_service', schema, executed), modelInput: { service: 'worker' }, resumedModel: mockStreamingModel([textReply('ok')]) });
    expect(executed).toEqual([{ service: 'worker', timeout: 60 }]);
    expect(started).toHaveLength(1);
    expect(finished).toEqual([expect.objectContaining({ toolCallId: 'c1', status: 'ok' })]);
  });

  it("the model asking again with the same arguments gets the current schema's call, judged afresh", async () => {
    const executed: unknown[] = [];
    const before = tool('restart_service', z.object({ service: z.string() }), executed);
    const after = tool('restart_service', z.object({ service: z.string(), timeout: z.number().int().default(60) }), executed);
    const resumedModel = mockStreamingModel([callReply('c2', 'restart_service', { service: 'worker' })]);
    const { outcome } = await resumedAfterDeploy({ before, after, modelInput: { service: 'worker' }, resumedModel });
    // The new call has the new default and needs a card of its own.
    expect(outcome.approvalRequests).toEqual([expect.objectContaining({ toolCallId: 'c2', input: { service: 'worker', timeout: 60 } })]);
    expect(executed).toEqual([]);
  });

  it('does not hand a TypeScript tool an edited input its current schema refuses', async () => {
    const executed: unknown[] = [];
    // Old release (max 50): the model asks for 5, Bob edits it to 40 and approves; the new release (max 20) resumes the turn.
    const { started, finished, toolResult } = await resumedAfterDeploy({ before: scaleTool(50, executed), after: scaleTool(20, executed), modelInput: { replicas: 5 }, edit: { replicas: 40 }, resumedModel: mockStreamingModel([textReply('done')]) });
    expect(executed).toEqual([]);
    expect(started).toEqual([]);
    expect(finished).toEqual([expect.objectContaining({ toolCallId: 'c1', status: 'error', error: expect.stringContaining(NOT_RUN('scale_worker')) })]);
    expect(toolResult).toContain(NOT_RUN('scale_worker'));
  });

  it('an edited input the current schema still accepts runs', async () => {
    const executed: unknown[] = [];
    const { finished } = await resumedAfterDeploy({ before: scaleTool(50, executed), after: scaleTool(20, executed), modelInput: { replicas: 5 }, edit: { replicas: 10 }, resumedModel: mockStreamingModel([textReply('done')]) });
    expect(executed).toEqual([{ replicas: 10 }]);
    expect(finished).toEqual([expect.objectContaining({ toolCallId: 'c1', status: 'ok' })]);
  });
});
