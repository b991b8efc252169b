import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { decidedStep } from '../approvals/pending-step.test-support.js';
import { defaultConfig, parseConfigFile } from '../config/config-file.js';
import { CommandRunnerError } from '../tools/command/command-runner.js';
import { createCommandTool } from '../tools/command/command-tool.js';
import { createHttpRequestTool } from '../tools/http/http-request-tool.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { approvedRunsFor } from './approved-runs.js';
import { resumeToolMessage } from './decision-messages.js';
import { runTurn } from './run-turn.js';
import type { ExecutionReport, StartingCall } from './tool-set.js';

/**
 * A call a human EDITED before approving, which its tool then refuses at its start (the new
 * ToolNotStartedError refusals: a header http_request cannot send, a closed command runner).
 * Before these refusals were answered "not run", the model's result carried the edit note
 * ("Bob changed this call's arguments ... Do not re-issue your original call unless the user
 * asks", ranWithInput): the model's own call stays in the history as it made it, and without the
 * note the model reads the refusal as about its own arguments. answerNotRun drops the note.
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

async function editedAndResumed(options: { definition: ToolDefinition; modelInput: object; edit: object }) {
  const messages: ModelMessage[] = [{ role: 'user', content: 'please' }];
  const paused = await runTurn({ model: mockStreamingModel([callReply('c1', options.definition.name, options.modelInput)]), instructions: 't', definitions: [options.definition], policy, messages, context, maxSteps: 5 });
  const request = paused.approvalRequests[0]!;
  const step = decidedStep(paused.approvalRequests, { [request.approvalId]: { outcome: 'approved', userId: 'UBOB' } }, { [request.approvalId]: options.edit });
  const started: StartingCall[] = [];
  const finished: ExecutionReport[] = [];
  const resumedModel = mockStreamingModel([textReply('done')]);
  await runTurn({
    model: resumedModel,
    instructions: 't',
    definitions: [options.definition],
    policy,
    messages: [...messages, ...paused.responseMessages, resumeToolMessage(step)],
    context,
    maxSteps: 5,
    approvedRuns: approvedRunsFor(step),
    beforeExecute: async (call) => void started.push(call),
    afterExecute: (report) => void finished.push(report),
  });
  const toolResults = resumedModel.doStreamCalls[0]!.prompt.flatMap((message) => (message.role === 'tool' ? message.content : [])).filter((part) => part.type === 'tool-result');
  return { started, finished, toolResult: JSON.stringify(toolResults.find((part) => part.toolCallId === 'c1')?.output) };
}

describe('an edited, approved call its tool refuses at its start', () => {
  it('http_request: an edited header value it cannot send (an em dash Slack typed) — the model is still told a human changed its call', async () => {
    const http = parseConfigFile(
      `
http:
  bases:
    - url: https://api.example.com/api/
`,
      't.yml',
    ).http!;
    const sent: string[] = [];
    const fetch = async (url: string | URL | Request) => {
      sent.push(String(url));
      return new Response('ok', { status: 200 });
    };
    const definition = createHttpRequestTool(http, { fetch: fetch as typeof globalThis.fetch });
    // The model asks to scale to 10; Bob edits it down to 2 and (Slack's autocorrect) writes an em dash in the reason header.
    const modelInput = { method: 'POST', url: 'https://api.example.com/api/scale', body: '{"replicas":10}', headers: { 'X-Reason': 'deploy - hotfix' } };
    const edit = { method: 'POST', url: 'https://api.example.com/api/scale', body: '{"replicas":2}', headers: { 'X-Reason': 'deploy — hotfix' } };
    const { started, toolResult } = await editedAndResumed({ definition, modelInput, edit });
    expect(sent).toEqual([]);
    expect(started).toHaveLength(1);
    // What the model reads must say its call was changed by a human (as it did before the refusal was answered "not run").
    expect(toolResult).toContain('ranWithInput');
  });

  it('a command tool whose runner is closed — the model is still told a human changed its call', async () => {
    const [toolConfig] = parseConfigFile(
      `
tools:
  - name: scale
    description: Scale
    command: ["/bin/echo", "{replicas}"]
    parameters:
      replicas: { type: number, description: How many }
    approval: always
`,
      'countersign.yml',
    ).tools;
    const runCommand = async () => {
      throw new CommandRunnerError({ executable: '/bin/echo', reason: 'the command runner is closed (the bot is stopping)', started: false });
    };
    const definition = createCommandTool(toolConfig!, { runCommand });
    const { started, toolResult } = await editedAndResumed({ definition, modelInput: { replicas: 10 }, edit: { replicas: 2 } });
    expect(started).toHaveLength(1);
    expect(toolResult).toContain('ranWithInput');
  });
});
