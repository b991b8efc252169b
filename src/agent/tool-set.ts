import { tool, type ToolApprovalConfiguration, type ToolSet } from 'ai';
import type { ToolContext, ToolDefinition } from '../tools/tool-definition.js';
import { evaluateCallPolicy } from '../approvals/evaluate-call-policy.js';
import type { Grant } from '../approvals/grant.js';
import { isAutoApproveActive } from '../approvals/policy/auto-approve.js';
import type { PolicyEvaluation } from '../approvals/policy/evaluate-policy.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import { crashPoint } from '../testing/crash-point.js';
import type { EditNote } from './apply-edits.js';

export type TurnContext = Omit<ToolContext, 'toolCallId' | 'idempotencyKey' | 'abortSignal'>;

/** How one execution went, for the audit trail. */
export interface ExecutionReport {
  toolCallId: string;
  toolName: string;
  status: 'ok' | 'error';
  durationMs: number;
  /** For command tools: the process exit code (`null` when killed by a signal). */
  exitCode?: number | null;
  error?: string;
}

/** What ran during one turn, so a turn that fails after executing tools can still record them. */
export interface ExecutionRecord {
  toolCallId: string;
  toolName: string;
  output: unknown;
}

/**
 * Builds the AI SDK tools for one turn. Tools are rebuilt per turn (they hold functions and are
 * never persisted), which is also how any process can resume a turn another process started.
 */
export function createTurnTools(options: {
  definitions: readonly ToolDefinition[];
  context: TurnContext;
  executions: ExecutionRecord[];
  /** Calls a human edited: their results carry the note so the model knows what changed. */
  edits?: ReadonlyMap<string, EditNote>;
  onExecuted?: (report: ExecutionReport) => void;
  /** Awaited just before a tool runs: records that it started, for crash recovery. */
  onBeforeExecute?: (toolCallId: string) => Promise<void>;
}): ToolSet {
  const tools: ToolSet = {};
  for (const definition of options.definitions) {
    const execute = definition.execute;
    if (!execute) {
      // No execute: the AI SDK stops the turn at this call and waits for a result we supply.
      tools[definition.name] = tool({ description: definition.description, inputSchema: definition.inputSchema });
      continue;
    }
    tools[definition.name] = tool({
      description: definition.description,
      inputSchema: definition.inputSchema,
      execute: async (input: unknown, { toolCallId, abortSignal }) => {
        const started = performance.now();
        const report = (outcome: Partial<ExecutionReport>) =>
          options.onExecuted?.({ toolCallId, toolName: definition.name, status: 'ok', durationMs: Math.round(performance.now() - started), ...outcome });
        await options.onBeforeExecute?.(toolCallId);
        let output: unknown;
        try {
          output = await execute(input, {
            ...options.context,
            toolCallId,
            // Stable for this call across retries and replicas: the thread plus the model's call id.
            idempotencyKey: `${options.context.teamId}:${options.context.channel}:${options.context.threadTs}:${toolCallId}`,
            ...(abortSignal === undefined ? {} : { abortSignal }),
          });
        } catch (error) {
          report({ status: 'error', error: error instanceof Error ? error.message : String(error) });
          throw error;
        }
        report(commandOutcome(output));
        crashPoint('after-tool');
        const edit = options.edits?.get(toolCallId);
        const result = edit ? { humanEdit: edit, result: output } : output;
        options.executions.push({ toolCallId, toolName: definition.name, output: result });
        return result;
      },
    });
  }
  return tools;
}

/** A call that ran without a card: auto-approve mode, or a grant a human gave earlier. */
export interface AutomaticApproval {
  toolCallId: string;
  toolName: string;
  input: unknown;
  mode: 'channel' | 'global';
  grant?: Grant;
}

/**
 * The one approval gate, handed to the AI SDK's `toolApproval`: the tool's own rule, then the
 * operator's policy (see `evaluateCallPolicy`). A tool without a rule, an unknown tool, or a rule
 * that throws all need a human: the gate fails closed. Auto-approve mode lets a call through
 * without a card, but never for a rule that forbids it, and the caller is told so it can say so.
 */
export function createToolApproval(options: {
  definitions: readonly ToolDefinition[];
  context: TurnContext;
  policy: PolicyConfig;
  /** A live grant covering this call, if any (see `grantCovers`). */
  findGrant?: (call: { toolName: string; input: unknown; evaluation: PolicyEvaluation }) => Promise<Grant | undefined>;
  onAutomaticApproval?: (approval: AutomaticApproval) => void;
}): ToolApprovalConfiguration<ToolSet, never> {
  const byName = new Map(options.definitions.map((definition) => [definition.name, definition]));
  return async ({ toolCall }) => {
    const definition = byName.get(toolCall.toolName);
    // Nothing runs for a human-answered tool, so there is nothing to approve.
    if (definition && !definition.execute) return 'not-applicable';
    const evaluation = await evaluateCallPolicy({
      policy: options.policy,
      definition,
      toolName: toolCall.toolName,
      input: toolCall.input,
      context: options.context,
    });
    if (!evaluation.needsApproval) return 'not-applicable';
    if (isAutoApproveActive({ policy: options.policy, channel: options.context.channel, evaluation })) {
      const mode = options.policy.autoApprove.global ? 'global' : 'channel';
      options.onAutomaticApproval?.({ toolCallId: toolCall.toolCallId, toolName: toolCall.toolName, input: toolCall.input, mode });
      return { type: 'approved', reason: `auto-approve mode (${mode})` };
    }
    const grant = await options.findGrant?.({ toolName: toolCall.toolName, input: toolCall.input, evaluation });
    if (grant) {
      options.onAutomaticApproval?.({ toolCallId: toolCall.toolCallId, toolName: toolCall.toolName, input: toolCall.input, mode: 'channel', grant });
      return { type: 'approved', reason: `allowed by grant ${grant.grantId} from <@${grant.grantedBy}>` };
    }
    return 'user-approval';
  };
}

/** Command tools report an exit code; a non-zero one (or a timeout) is an error for the audit trail. */
function commandOutcome(output: unknown): Partial<ExecutionReport> {
  if (typeof output !== 'object' || output === null || !('exitCode' in output)) return {};
  const { exitCode, error, timedOut } = output as { exitCode?: unknown; error?: unknown; timedOut?: unknown };
  const code = typeof exitCode === 'number' || exitCode === null ? exitCode : undefined;
  const failed = code !== 0 || timedOut === true || typeof error === 'string';
  return {
    ...(code !== undefined ? { exitCode: code } : {}),
    ...(failed ? { status: 'error' as const } : {}),
    ...(typeof error === 'string' ? { error } : timedOut === true ? { error: 'timed out' } : {}),
  };
}
