import type { AssistantModelMessage, ModelMessage, ToolModelMessage } from 'ai';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PendingStep } from '../approvals/pending-step.js';
import { decidedStep } from '../approvals/pending-step.test-support.js';
import { answeredCallThenMessage } from './approved-history.test-support.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { defaultConfig } from '../config/config-file.js';
import { approvedRunsFor } from './approved-runs.js';
import { closingToolMessage, resumeToolMessage } from './decision-messages.js';
import { recordExecutions } from './executed-calls.js';
import { runTurn, TurnFailedError } from './run-turn.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const callReply = (...calls: Array<{ id: string; name: string; input: object }>) => ({
  content: calls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.input) })),
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});
const textReply = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });

const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };


const policy = defaultConfig().policy;

function recordingTools(executed: unknown[]): ToolDefinition[] {
  return [
    {
      name: 'restart',
      description: 'Restart a service',
      inputSchema: z.object({ namespace: z.string() }),
      approval: (input: { namespace: string }) => input.namespace === 'prod',
      execute: async (input) => {
        executed.push(['restart', input]);
        return { restarted: true };
      },
    },
    {
      name: 'unruled',
      description: 'A tool whose author forgot the approval rule',
      inputSchema: z.object({}),
      execute: async (input) => {
        executed.push(['unruled', input]);
        return 'ran';
      },
    },
  ];
}

describe('runTurn', () => {
  it('runs calls the rule lets through and pauses on the rest, failing closed without a rule', async () => {
    const executed: unknown[] = [];
    const model = mockStreamingModel([
        callReply(
          { id: 'c1', name: 'restart', input: { namespace: 'staging' } },
          { id: 'c2', name: 'restart', input: { namespace: 'prod' } },
          { id: 'c3', name: 'unruled', input: {} },
        ),
      ]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'restart everything' }];
    const outcome = await runTurn({ model, instructions: 'test', definitions: recordingTools(executed), policy, messages, context, maxSteps: 5 });
    expect(executed).toEqual([['restart', { namespace: 'staging' }]]);
    expect(outcome.approvalRequests.map((request) => [request.toolCallId, request.toolName])).toEqual([
      ['c2', 'restart'],
      ['c3', 'unruled'],
    ]);
  });

  it('resumes with all decisions in one message: approved runs, denied reaches the model as a denial', async () => {
    const executed: unknown[] = [];
    const first = mockStreamingModel([callReply({ id: 'c2', name: 'restart', input: { namespace: 'prod' } }, { id: 'c3', name: 'unruled', input: {} })]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
    const paused = await runTurn({ model: first, instructions: 'test', definitions: recordingTools(executed), policy, messages, context, maxSteps: 5 });
    const [prod, unruled] = paused.approvalRequests;
    const step = decidedStep(paused.approvalRequests, {
      [prod!.approvalId]: { outcome: 'approved', userId: 'UBOB' },
      [unruled!.approvalId]: { outcome: 'denied', userId: 'UBOB', reason: 'not today' },
    });

    const second = mockStreamingModel([textReply('done')] );
    const resumedMessages = [...messages, ...paused.responseMessages, resumeToolMessage(step)];
    const resumed = await runTurn({ model: second, instructions: 'test', definitions: recordingTools(executed), policy, messages: resumedMessages, context, maxSteps: 5, approvedRuns: approvedRunsFor(step) });
    expect(resumed.text).toBe('done');
    expect(executed).toEqual([['restart', { namespace: 'prod' }]]);
    const prompt = JSON.stringify(second.doStreamCalls[0]!.prompt);
    expect(prompt).toContain('Declined by <@UBOB>: not today');
    expect(prompt).toContain('restarted');
  });

  it('does not run a call the history says was approved when no countersignature is on record', async () => {
    const executed: unknown[] = [];
    const first = mockStreamingModel([callReply({ id: 'c2', name: 'restart', input: { namespace: 'prod' } })]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
    const paused = await runTurn({ model: first, instructions: 'test', definitions: recordingTools(executed), policy, messages, context, maxSteps: 5 });
    const step = decidedStep(paused.approvalRequests, { [paused.approvalRequests[0]!.approvalId]: { outcome: 'approved', userId: 'UBOB' } });
    const second = mockStreamingModel([textReply('done')]);
    await runTurn({ model: second, instructions: 'test', definitions: recordingTools(executed), policy, messages: [...messages, ...paused.responseMessages, resumeToolMessage(step)], context, maxSteps: 5 });
    expect(executed).toEqual([]);
    expect(JSON.stringify(second.doStreamCalls[0]!.prompt)).toContain('no approval on record');
  });

  it('keeps the history valid for a new message after calls are closed unanswered', async () => {
    const executed: unknown[] = [];
    const first = mockStreamingModel([callReply({ id: 'c2', name: 'restart', input: { namespace: 'prod' } })] );
    const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
    const paused = await runTurn({ model: first, instructions: 'test', definitions: recordingTools(executed), policy, messages, context, maxSteps: 5 });
    const step = {
      calls: paused.approvalRequests.map((request) => ({ ...request, description: '' })),
      decisions: { [paused.approvalRequests[0]!.approvalId]: { outcome: 'superseded', userId: 'UALICE', at: 1 } },
    } as unknown as PendingStep;
    const second = mockStreamingModel([textReply('ok')] );
    const next = [...messages, ...paused.responseMessages, closingToolMessage(step), { role: 'user' as const, content: 'never mind' }];
    const outcome = await runTurn({ model: second, instructions: 'test', definitions: recordingTools(executed), policy, messages: next, context, maxSteps: 5 });
    expect(outcome.text).toBe('ok');
    expect(executed).toEqual([]);
  });

  it('streams the answer as it is written, the text of every step separated by a blank line', async () => {
    const executed: unknown[] = [];
    const model = mockStreamingModel([
      { ...callReply({ id: 'c1', name: 'restart', input: { namespace: 'staging' } }), content: [{ type: 'text', text: 'Restarting staging.' }, ...callReply({ id: 'c1', name: 'restart', input: { namespace: 'staging' } }).content] },
      textReply('It is back up.'),
    ]);
    const deltas: string[] = [];
    const outcome = await runTurn({ model, instructions: 'test', definitions: recordingTools(executed), policy, messages: [{ role: 'user', content: 'go' }], context, maxSteps: 5, onTextDelta: (delta) => deltas.push(delta) });
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe('Restarting staging.\n\nIt is back up.');
    expect(outcome.text).toBe(deltas.join(''));
    expect(executed).toHaveLength(1);
  });

  it('reports the tools that ran when the model fails afterwards, so they are never re-run', async () => {
    const executed: unknown[] = [];
    let calls = 0;
    const model = mockStreamingModel(async () => {
        calls += 1;
        if (calls === 1) return callReply({ id: 'c1', name: 'restart', input: { namespace: 'staging' } });
        throw new Error('model went away');
      });
    const failure = await runTurn({
      model,
      instructions: 'test',
      definitions: recordingTools(executed),
      policy,
      messages: [{ role: 'user', content: 'go' }],
      context,
      maxSteps: 5,
      maxRetries: 0,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TurnFailedError);
    expect((failure as TurnFailedError).executions).toEqual([{ toolCallId: 'c1', toolName: 'restart', input: { namespace: 'staging' }, output: { restarted: true } }]);
  });

  it("hands tools the turn's lease check, so a tool that waited can check again before it acts", async () => {
    const seen: unknown[] = [];
    const assertHeld = async () => {};
    const probe: ToolDefinition = {
      name: 'probe',
      description: 'Probe',
      inputSchema: z.object({}),
      approval: 'never',
      execute: async (_input, toolContext) => {
        seen.push(toolContext.assertHeld);
        return 'ok';
      },
    };
    const model = mockStreamingModel([callReply({ id: 'c1', name: 'probe', input: {} }), textReply('done')]);
    await runTurn({ model, instructions: 'test', definitions: [probe], policy, messages: [{ role: 'user', content: 'go' }], context, maxSteps: 5, assertHeld });
    expect(seen).toEqual([assertHeld]);
  });

  it('reports a call that started and threw too: it may have had its effect', async () => {
    let calls = 0;
    const model = mockStreamingModel(async () => {
      calls += 1;
      if (calls === 1) return callReply({ id: 'c1', name: 'deploy', input: { service: 'api' } });
      throw new Error('model went away');
    });
    const deploy: ToolDefinition = {
      name: 'deploy',
      description: 'Deploy a service',
      inputSchema: z.object({ service: z.string() }),
      approval: 'never',
      execute: async () => {
        throw new Error('socket hang up after the request was sent');
      },
    };
    const failure = await runTurn({ model, instructions: 'test', definitions: [deploy], policy, messages: [{ role: 'user', content: 'go' }], context, maxSteps: 5, maxRetries: 0 }).catch(
      (error: unknown) => error,
    );
    expect((failure as TurnFailedError).executions).toEqual([{ toolCallId: 'c1', toolName: 'deploy', input: { service: 'api' }, error: 'socket hang up after the request was sent' }]);
  });

  it('runs the human-edited input, not the original, and tells the model what changed', async () => {
    const executed: unknown[] = [];
    const tools: ToolDefinition[] = [
      {
        name: 'scale',
        description: 'Scale a deployment',
        inputSchema: z.object({ namespace: z.string(), replicas: z.number().int(), force: z.boolean().default(false) }),
        approval: 'always',
        execute: async (input) => {
          executed.push(input);
          return { scaled: true };
        },
      },
    ];
    const first = mockStreamingModel([callReply({ id: 'c1', name: 'scale', input: { namespace: 'prod', replicas: 10 } })] );
    const messages: ModelMessage[] = [{ role: 'user', content: 'scale prod to 10' }];
    const paused = await runTurn({ model: first, instructions: 'test', definitions: tools, policy, messages, context, maxSteps: 5 });
    const request = paused.approvalRequests[0]!;
    const step = decidedStep(paused.approvalRequests, { [request.approvalId]: { outcome: 'approved', userId: 'UBOB' } }, { [request.approvalId]: { namespace: 'staging', replicas: 3, force: false } });

    const second = mockStreamingModel([textReply('scaled staging')] );
    const history = [...messages, ...paused.responseMessages, resumeToolMessage(step)];
    const resumed = await runTurn({ model: second, instructions: 'test', definitions: tools, policy, messages: history, context, maxSteps: 5, approvedRuns: approvedRunsFor(step) });
    expect(resumed.text).toBe('scaled staging');
    expect(executed).toEqual([{ namespace: 'staging', replicas: 3, force: false }]);
    const prompt = JSON.stringify(second.doStreamCalls[0]!.prompt);
    expect(prompt).toContain('changed this call');
    expect(prompt).toContain('namespace: \\"prod\\" → \\"staging\\"');
    // The model's own call stays as it made it; the result says what ran instead.
    const parts = second.doStreamCalls[0]!.prompt.flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<{ type: string }>) : []));
    const call = parts.find((part) => part.type === 'tool-call');
    expect(call).toMatchObject({ toolCallId: 'c1', input: { namespace: 'prod', replicas: 10 } });
  });

  it('tells the model the human-edited input is what failed when an edited call throws', async () => {
    const tools: ToolDefinition[] = [
      {
        name: 'scale',
        description: 'Scale a deployment',
        inputSchema: z.object({ namespace: z.string(), replicas: z.number().int() }),
        approval: 'always',
        execute: async () => {
          throw new Error('connection reset while scaling');
        },
      },
    ];
    const first = mockStreamingModel([callReply({ id: 'c1', name: 'scale', input: { namespace: 'prod', replicas: 10 } })]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'scale prod to 10' }];
    const paused = await runTurn({ model: first, instructions: 'test', definitions: tools, policy, messages, context, maxSteps: 5 });
    const request = paused.approvalRequests[0]!;
    const step = decidedStep(paused.approvalRequests, { [request.approvalId]: { outcome: 'approved', userId: 'UBOB' } }, { [request.approvalId]: { namespace: 'staging', replicas: 3 } });
    const history = [...messages, ...paused.responseMessages, resumeToolMessage(step)];

    const second = mockStreamingModel([textReply('Scaling staging to 3 failed.')]);
    await runTurn({ model: second, instructions: 'test', definitions: tools, policy, messages: history, context, maxSteps: 5, approvedRuns: approvedRunsFor(step) });
    // The model's call says prod/10; what failed was staging/3. Told only the error, it reports (and retries) prod.
    const result = second.doStreamCalls[0]!.prompt.flatMap((message) => (message.role === 'tool' ? message.content : [])).find((part) => part.type === 'tool-result');
    expect(result?.output).toMatchObject({ type: 'error-text', value: expect.stringContaining('connection reset while scaling') });
    expect(result?.output).toMatchObject({ value: expect.stringContaining('ranWithInput: {"namespace":"staging","replicas":3}') });
    expect(result?.output).toMatchObject({ value: expect.stringContaining('namespace: "prod" → "staging"') });

    // The same when the model then fails and the turn's executions are recorded instead.
    const failing = mockStreamingModel(() => {
      throw new Error('model down');
    });
    const failure = await runTurn({ model: failing, instructions: 'test', definitions: tools, policy, messages: history, context, maxSteps: 5, maxRetries: 0, approvedRuns: approvedRunsFor(step) }).catch((error: unknown) => error);
    const recorded = recordExecutions(history, (failure as TurnFailedError).executions).at(-1);
    const recordedResult = recorded?.role === 'tool' ? recorded.content.find((part) => part.type === 'tool-result') : undefined;
    expect(recordedResult?.output).toMatchObject({ type: 'error-text', value: expect.stringContaining('ranWithInput: {"namespace":"staging","replicas":3}') });
  });
});

describe('runTurn with tool call ids the model server repeats', () => {
  const schema = z.object({ service: z.string(), namespace: z.enum(['staging', 'prod']) });
  function clusterTools(ran: unknown[]): ToolDefinition[] {
    return [
      { name: 'scale_down', description: 'Scale to zero', inputSchema: schema, approval: 'always', execute: async (input) => ran.push(['scale_down', input]) },
      { name: 'delete_deployment', description: 'Delete', inputSchema: schema, approval: 'always', execute: async (input) => ran.push(['delete_deployment', input]) },
      { name: 'get_pods', description: 'List pods', inputSchema: z.object({ namespace: z.string() }), approval: 'never', execute: async (input) => ran.push(['get_pods', input]) },
    ];
  }
  const scaleDown = { name: 'scale_down', input: { service: 'worker', namespace: 'staging' } };
  const deleteDeployment = { name: 'delete_deployment', input: { service: 'payments', namespace: 'prod' } };

  it('gives calls of one response that share an id their own ids, so each approval counts for its own call', async () => {
    const ran: unknown[] = [];
    const first = mockStreamingModel([callReply({ id: 'call_1', ...scaleDown }, { id: 'call_1', ...deleteDeployment })]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'scale down worker and delete payments' }];
    const paused = await runTurn({ model: first, instructions: 'test', definitions: clusterTools(ran), policy, messages, context, maxSteps: 5 });
    expect(paused.approvalRequests.map((request) => request.toolName)).toEqual(['scale_down', 'delete_deployment']);
    expect(new Set(paused.approvalRequests.map((request) => request.toolCallId)).size).toBe(2);

    const [approve, deny] = paused.approvalRequests;
    const step = decidedStep(paused.approvalRequests, { [approve!.approvalId]: { outcome: 'approved', userId: 'UBOB' }, [deny!.approvalId]: { outcome: 'denied', userId: 'UBOB' } });
    const second = mockStreamingModel([textReply('Scaled down worker.')]);
    await runTurn({ model: second, instructions: 'test', definitions: clusterTools(ran), policy, messages: [...messages, ...paused.responseMessages, resumeToolMessage(step)], context, maxSteps: 5, approvedRuns: approvedRunsFor(step) });
    expect(ran).toEqual([['scale_down', scaleDown.input]]);
  });

  it('gives a call whose id an earlier turn used a new one', async () => {
    const ran: unknown[] = [];
    const model = mockStreamingModel([callReply({ id: 'call_1', name: 'get_pods', input: { namespace: 'prod' } }), textReply('prod has pod-b.')]);
    const outcome = await runTurn({ model, instructions: 'test', definitions: clusterTools(ran), policy, messages: answeredCallThenMessage, context, maxSteps: 5 });
    const calls = outcome.responseMessages.flatMap((message) => (message.role === 'assistant' && Array.isArray(message.content) ? message.content : [])).filter((part) => part.type === 'tool-call');
    expect(calls).toEqual([expect.objectContaining({ toolName: 'get_pods', input: { namespace: 'prod' } })]);
    expect(calls[0]!.toolCallId).not.toBe('call_1');
    expect(ran).toEqual([['get_pods', { namespace: 'prod' }]]);
  });

  it("never runs a denied call under another call's approval in a history where two calls share an id", async () => {
    // A history stored before ids were made unique: the AI SDK pairs both approvals with the last call_1.
    const ran: unknown[] = [];
    const requests = [
      { approvalId: 'a1', toolCallId: 'call_1', toolName: scaleDown.name, input: scaleDown.input },
      { approvalId: 'a2', toolCallId: 'call_1', toolName: deleteDeployment.name, input: deleteDeployment.input },
    ];
    const step = decidedStep(requests, { a1: { outcome: 'approved', userId: 'UBOB' }, a2: { outcome: 'denied', userId: 'UBOB' } });
    const history: ModelMessage[] = [
      { role: 'user', content: 'scale down worker and delete payments' },
      {
        role: 'assistant',
        content: [
          ...requests.map((request) => ({ type: 'tool-call' as const, toolCallId: request.toolCallId, toolName: request.toolName, input: request.input })),
          ...requests.map((request) => ({ type: 'tool-approval-request' as const, approvalId: request.approvalId, toolCallId: request.toolCallId })),
        ],
      },
      resumeToolMessage(step),
    ];
    const model = mockStreamingModel([textReply('Done.')]);
    await runTurn({ model, instructions: 'test', definitions: clusterTools(ran), policy, messages: history, context, maxSteps: 5, approvedRuns: approvedRunsFor(step) });
    expect(ran).toEqual([]);
    const told = JSON.stringify(model.doStreamCalls[0]!.prompt);
    expect(told).toContain('Not run: the approval on record for this call id is for a different call.');
  });
});


describe('runTurn resuming an approved call whose tool this process does not have', () => {
  // Approved while `restart` existed; resumed where it is gone (an MCP server down at start-up, a tool removed by a deploy).
  async function approvedThenGone() {
    const executed: unknown[] = [];
    const first = mockStreamingModel([callReply({ id: 'c2', name: 'restart', input: { namespace: 'prod' } })]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'restart prod' }];
    const paused = await runTurn({ model: first, instructions: 'test', definitions: recordingTools(executed), policy, messages, context, maxSteps: 5 });
    const step = decidedStep(paused.approvalRequests, { [paused.approvalRequests[0]!.approvalId]: { outcome: 'approved', userId: 'UBOB' } });
    const remaining = recordingTools(executed).filter((definition) => definition.name !== 'restart');
    return { executed, step, remaining, history: [...messages, ...paused.responseMessages, resumeToolMessage(step)] };
  }

  it('tells the model and the audit trail it was not run, writes no start, and does not offer the tool again', async () => {
    const { executed, step, remaining, history } = await approvedThenGone();
    const second = mockStreamingModel([textReply('restart is unavailable right now')]);
    const started: unknown[] = [];
    const finished: unknown[] = [];
    const outcome = await runTurn({
      model: second,
      instructions: 'test',
      definitions: remaining,
      policy,
      messages: history,
      context,
      maxSteps: 5,
      approvedRuns: approvedRunsFor(step),
      beforeExecute: async (call) => void started.push(call),
      afterExecute: (report) => void finished.push(report),
    });
    expect(outcome.text).toBe('restart is unavailable right now');
    expect(executed).toEqual([]);
    expect(started).toEqual([]);
    expect(finished).toEqual([expect.objectContaining({ toolCallId: 'c2', toolName: 'restart', status: 'error', error: expect.stringMatching(/^Not run: restart is not available now .*nothing was run/) })]);
    const result = second.doStreamCalls[0]!.prompt.flatMap((message) => (message.role === 'tool' ? message.content : [])).find((part) => part.type === 'tool-result');
    expect(result?.output).toMatchObject({ type: 'error-text', value: expect.stringContaining('Not run: restart is not available now') });
    expect((second.doStreamCalls[0]!.tools ?? []).map((offered) => offered.name)).toEqual(['unruled']);
  });

  it('answers it "not run" even without a countersignature on record, and keeps that if the model then fails', async () => {
    const { remaining, history } = await approvedThenGone();
    const failing = mockStreamingModel(() => {
      throw new Error('model down');
    });
    const failure = await runTurn({ model: failing, instructions: 'test', definitions: remaining, policy, messages: history, context, maxSteps: 5, maxRetries: 0 }).catch((error: unknown) => error);
    const recorded = recordExecutions(history, (failure as TurnFailedError).executions).at(-1);
    const recordedResult = recorded?.role === 'tool' ? recorded.content.find((part) => part.type === 'tool-result') : undefined;
    // Not "Failed after it started": Try again must neither call it interrupted nor leave it without a result.
    expect(JSON.stringify(recordedResult?.output)).toContain('Not run: restart is not available now');
    expect(JSON.stringify(recordedResult?.output)).not.toContain('Failed after it started');
  });
});

describe('runTurn with a step the model cut off while calling tools', () => {
  const schema = z.object({ namespace: z.string() });
  function cutOffTools(ran: unknown[]): ToolDefinition[] {
    return [
      { name: 'get_pods', description: 'List pods', inputSchema: schema, approval: 'never', execute: async (input) => ran.push(['get_pods', input]) },
      { name: 'restart', description: 'Restart', inputSchema: schema, approval: 'always', execute: async (input) => ran.push(['restart', input]) },
      { name: 'scale', description: 'Scale', inputSchema: schema, approval: 'always', execute: async (input) => ran.push(['scale', input]) },
      { name: 'ask_user', description: 'Ask a person', inputSchema: z.object({ question: z.string() }) },
    ];
  }
  // The schedule lets `scale` through without a card: its approval is the gate's own, given as the call streamed in.
  const scheduleApproval = { schedule: 'nightly', covers: (toolName: string) => toolName === 'scale' };
  const cutOffReply = (unified: 'length' | 'content-filter' | 'other') => ({
    content: [
      { type: 'text' as const, text: 'Checking first.' },
      { type: 'tool-call' as const, toolCallId: 'c1', toolName: 'get_pods', input: '{"namespace":"prod"}' },
      { type: 'tool-call' as const, toolCallId: 'c2', toolName: 'restart', input: '{"namespace":"prod"}' },
      { type: 'tool-call' as const, toolCallId: 'c3', toolName: 'scale', input: '{"namespace":"prod"}' },
      { type: 'tool-call' as const, toolCallId: 'c4', toolName: 'ask_user', input: '{"question":"Which one?"}' },
      { type: 'tool-call' as const, toolCallId: 'c5', toolName: 'get_pods', input: '{"namespace":"st' },
    ],
    finishReason: { unified, raw: unified },
    usage,
    warnings: [],
  });

  for (const finishReason of ['length', 'content-filter', 'other'] as const) {
    it(`runs none of its calls, asks nobody, and closes every call so the model can be asked again (${finishReason})`, async () => {
      const ran: unknown[] = [];
      const automatic: unknown[] = [];
      const messages: ModelMessage[] = [{ role: 'user', content: 'restart prod if it is stuck' }];
      const outcome = await runTurn({
        model: mockStreamingModel([cutOffReply(finishReason)]),
        instructions: 'test',
        definitions: cutOffTools(ran),
        policy,
        messages,
        context,
        maxSteps: 5,
        scheduleApproval,
        onAutomaticApproval: (approval) => automatic.push(approval),
      });
      expect(ran).toEqual([]);
      // No card, no question, and no "ran without a card" for a call that never ran.
      expect(outcome.approvalRequests).toEqual([]);
      expect(automatic).toEqual([]);
      expect(outcome.cutOff).toEqual({ finishReason });
      expect(outcome.text).toBe('Checking first.');

      expect(outcome.responseMessages.map((message) => message.role)).toEqual(['assistant', 'tool']);
      const [step, closing] = outcome.responseMessages as [AssistantModelMessage, ToolModelMessage];
      const results = closing.content.flatMap((part) => (part.type === 'tool-result' ? [[part.toolCallId, part.output.type]] : []));
      expect(results.sort()).toEqual([
        ['c1', 'execution-denied'],
        ['c2', 'execution-denied'],
        ['c3', 'execution-denied'],
        ['c4', 'execution-denied'],
        ['c5', 'error-text'],
      ]);
      expect(JSON.stringify(closing)).toContain(`Not run: the model's response was cut off (finish reason ${finishReason}) before this call could run.`);
      // The card that is not posted leaves no request behind; the gate's own approval keeps its response.
      const requests = (step.content as Exclude<AssistantModelMessage['content'], string>).flatMap((part) => (part.type === 'tool-approval-request' ? [part.toolCallId] : []));
      expect(requests).toEqual(['c3']);

      // Try again: the history as saved ends on the tool message and the model is asked again; nothing old runs.
      const again = mockStreamingModel([textReply('prod is fine.')]);
      const retried = await runTurn({ model: again, instructions: 'test', definitions: cutOffTools(ran), policy, messages: [...messages, ...outcome.responseMessages], context, maxSteps: 5, scheduleApproval });
      expect(retried.text).toBe('prod is fine.');
      expect(retried.cutOff).toBeUndefined();
      expect(ran).toEqual([]);
    });
  }

  it('is not a cut-off step when the model ends a later step at its limit without calling anything', async () => {
    const ran: unknown[] = [];
    const silent = { content: [], finishReason: { unified: 'length' as const, raw: 'length' }, usage, warnings: [] };
    const outcome = await runTurn({
      model: mockStreamingModel([callReply({ id: 'c1', name: 'get_pods', input: { namespace: 'prod' } }), silent]),
      instructions: 'test',
      definitions: cutOffTools(ran),
      policy,
      messages: [{ role: 'user', content: 'pods?' }],
      context,
      maxSteps: 5,
    });
    // The calls of the step before ran; nothing says otherwise (the turn is "no answer", as before).
    expect(ran).toEqual([['get_pods', { namespace: 'prod' }]]);
    expect(outcome.cutOff).toBeUndefined();
    expect(JSON.stringify(outcome.responseMessages)).not.toContain('Not run');
  });

  it('hands the start a call let through without a card with its approval, and tells the caller once it ran', async () => {
    const ran: unknown[] = [];
    const automatic: string[] = [];
    const started: string[] = [];
    const outcome = await runTurn({
      model: mockStreamingModel([callReply({ id: 'c1', name: 'scale', input: { namespace: 'prod' } }), textReply('Scaled.')]),
      instructions: 'test',
      definitions: cutOffTools(ran),
      policy,
      messages: [{ role: 'user', content: 'scale prod' }],
      context,
      maxSteps: 5,
      scheduleApproval,
      onAutomaticApproval: (approval) => automatic.push(approval.toolCallId),
      // The audit of an automatic approval is written with the call's start: the start carries it.
      // The caller is told only after (a check after the marker may still refuse the call).
      beforeExecute: async (call) => void started.push(`${call.toolCallId}:${call.automatic?.mode}:${automatic.includes(call.toolCallId)}`),
    });
    expect(outcome.text).toBe('Scaled.');
    expect(outcome.cutOff).toBeUndefined();
    expect(ran).toEqual([['scale', { namespace: 'prod' }]]);
    expect(started).toEqual(['c1:schedule:false']);
    expect(automatic).toEqual(['c1']);
  });
});
