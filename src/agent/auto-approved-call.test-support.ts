import { inputHash } from '../approvals/input-version.js';
import type { ContentFreeFailure } from '../tracing/trace-context.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { createTurnTools, type AutomaticApproval, type ExecutionRecord, type ExecutionReport } from './tool-set.js';

/**
 * One call, `c1`, of `toolName`, let through without a card (auto-approve mode), in a turn built
 * from `definitions`: what the turn records of it, and whom it tells. `execute` hands the tool set
 * `input` as the model's input, as the AI SDK would once its own schema check passed.
 */
export function autoApprovedCall({ definitions, toolName, input }: { definitions: readonly ToolDefinition[]; toolName: string; input: unknown }) {
  const executions: ExecutionRecord[] = [];
  const reports: ExecutionReport[] = [];
  /** Who the thread would be told ran without a card (`onAutomaticApproval`). */
  const toldRan: AutomaticApproval[] = [];
  /** The calls whose start marker (audit `tool-started`) was written. */
  const markers: string[] = [];
  /** How the call's span was marked failed. */
  const failures: ContentFreeFailure[] = [];
  const automatic: AutomaticApproval = { toolCallId: 'c1', toolName, input, mode: 'channel', requesterId: 'UALICE' };
  const tools = createTurnTools({
    definitions,
    context: { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' },
    executions,
    bases: new Map([['c1', { toolName, modelInputHash: inputHash(input), basis: { kind: 'auto-approve' as const, mode: 'channel' as const } }]]),
    automaticApprovals: new Map([['c1', automatic]]),
    onAutomaticApproval: (approval) => toldRan.push(approval),
    beforeExecute: async (call) => void markers.push(call.toolCallId),
    afterExecute: (report) => void reports.push(report),
    traceExecution: (_call, run) => run((failure) => failures.push(failure)),
  });
  const execute = () => (tools[toolName]!.execute as (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown>)(input, { toolCallId: 'c1', messages: [] });
  return { execute, executions, reports, toldRan, markers, failures };
}
