import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { approvedRunsFor } from '../agent/approved-runs.js';
import { resumeToolMessage } from '../agent/decision-messages.js';
import { runTurn } from '../agent/run-turn.js';
import { decidedStep } from '../approvals/pending-step.test-support.js';
import { defaultConfig, parseConfigFile } from '../config/config-file.js';
import { createCommandTool } from '../tools/command/command-tool.js';
import type { RunCommandOptions } from '../tools/command/run-command.js';
import { definitionFingerprintOf } from '../tools/definition-fingerprint.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import type { Lease } from './lease.js';
import { postStateLostNotice } from './state-lost-notice.js';
import type { ThreadMessenger } from './thread-messenger.js';

/**
 * Reviewer test (3d6e406). A resumed turn whose approved call is NOT run (a deploy changed the
 * tool since the approval: "Not run: ... nothing was run"), then Redis restarts empty before the
 * turn is saved. run-and-publish pushes `outcome.executions` into `TurnScope.executions`, and the
 * state-lost notice lists every entry as a call that "already ran", asking the requester to check
 * what it did, "asked again, I would run them again". But notRunAnswer (tool-set.ts) pushes calls
 * that never started into `executions` too, so the thread is told restart_service ran when nothing ran.
 */
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const callReply = (input: object) => ({
  content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'restart_service', input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});
const textReply = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };
const policy = defaultConfig().policy;
const PARAMETERS = 'service: { type: string }\n      namespace: { type: string, enum: [staging, prod] }';

function restartTool(command: string[], ran: string[][]): ToolDefinition {
  const yaml = `tools:\n  - name: restart_service\n    description: Restart a deployment\n    command: ${JSON.stringify(command)}\n    parameters:\n      ${PARAMETERS}\n`;
  const [tool] = parseConfigFile(yaml, 'countersign.yml').tools;
  const runCommand = async ({ argv }: RunCommandOptions) => {
    ran.push(argv);
    return { exitCode: 0, signal: null, timedOut: false, durationMs: 1, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false };
  };
  return createCommandTool(tool!, { runCommand });
}

describe('state-lost notice after a resumed turn whose approved call was not run', () => {
  it('does not tell the thread that a call which never started "already ran"', async () => {
    const ran: string[][] = [];
    const before = restartTool(['kubectl', 'rollout', 'restart', 'deployment/{service}', '-n', '{namespace}'], ran);
    const after = restartTool(['kubectl', 'delete', 'deployment/{service}', '-n', '{namespace}'], ran);
    const messages: ModelMessage[] = [{ role: 'user', content: 'restart the worker in prod' }];
    const paused = await runTurn({ model: mockStreamingModel([callReply({ service: 'worker', namespace: 'prod' })]), instructions: 't', definitions: [before], policy, messages, context, maxSteps: 5 });
    const request = paused.approvalRequests[0]!;
    const step = decidedStep(paused.approvalRequests, { [request.approvalId]: { outcome: 'approved', userId: 'UBOB' } });
    step.calls[0]!.definitionFingerprint = await definitionFingerprintOf(before);
    const outcome = await runTurn({
      model: mockStreamingModel([textReply('I did not restart it.')]),
      instructions: 't',
      definitions: [after],
      policy,
      messages: [...messages, ...paused.responseMessages, resumeToolMessage(step)],
      context,
      maxSteps: 5,
      approvedRuns: approvedRunsFor(step),
    });
    // Nothing ran.
    expect(ran).toEqual([]);

    // What conversation.ts does once the save finds the state lost: scope.executions = outcome.executions (run-and-publish).
    const notices: string[] = [];
    const messenger = { postNotice: async ({ text }: { text: string }) => void notices.push(text) } as unknown as ThreadMessenger;
    await postStateLostNotice({
      store: { fenceState: async () => 'missing' as const },
      messenger,
      lease: { fence: { threadKey: 'T1:C1:1.1', token: '1.000000000001' } } as unknown as Lease,
      where: { channel: 'C1', threadTs: '1.1' },
      executions: outcome.executions,
      logger: pino({ level: 'silent' }),
    });
    expect(notices).toHaveLength(1);
    const notice = notices[0]!;
    expect(notice, notice).not.toContain('already ran');
    expect(notice, notice).not.toContain('`restart_service` ran');
  });

  it('names a call that ran as ran and one refused before its start as not run, in the same notice', async () => {
    const notices: string[] = [];
    const messenger = { postNotice: async ({ text }: { text: string }) => void notices.push(text) } as unknown as ThreadMessenger;
    await postStateLostNotice({
      store: { fenceState: async () => 'missing' as const },
      messenger,
      lease: { fence: { threadKey: 'T1:C1:1.1', token: '1.000000000001' } } as unknown as Lease,
      where: { channel: 'C1', threadTs: '1.1' },
      executions: [
        { toolCallId: 'c1', toolName: 'scale_deployment', input: {}, output: { scaled: true } },
        { toolCallId: 'c2', toolName: 'restart_service', input: {}, output: 'Not run: grant revoked; nothing was run.', started: false },
      ],
      logger: pino({ level: 'silent' }),
    });
    const [notice = ''] = notices;
    expect(notice, notice).toContain('`scale_deployment` ran; it returned: {"scaled":true}');
    expect(notice, notice).not.toContain('`restart_service` ran');
    expect(notice, notice).toContain('Not run (stopped before they started): `restart_service`.');
  });
});
