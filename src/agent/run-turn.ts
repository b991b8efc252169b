import { randomUUID } from 'node:crypto';
import { generateText, stepCountIs, type LanguageModel, type ModelMessage, type ToolApprovalRequestOutput, type ToolSet } from 'ai';
import type { ToolDefinition } from '../tools/tool-definition.js';
import type { EditNote } from './apply-edits.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import {
  createToolApproval,
  createTurnTools,
  type AutomaticApproval,
  type ExecutionRecord,
  type ExecutionReport,
  type TurnContext,
} from './tool-set.js';

export interface ApprovalRequest {
  kind: 'approval' | 'question';
  /** The AI SDK's approval id; for a question, an id of ours (questions have no approval). */
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export interface TurnOutcome {
  /** Messages the turn added (assistant and tool), to append to the stored history. */
  responseMessages: ModelMessage[];
  text: string;
  /** Calls waiting for a human (approvals and questions); empty when the turn finished. */
  approvalRequests: ApprovalRequest[];
}

/** A turn that failed after tools already ran; `executions` must be recorded so they never re-run. */
export class TurnFailedError extends Error {
  readonly executions: ExecutionRecord[];
  constructor(options: { cause: unknown; executions: ExecutionRecord[] }) {
    super(`agent turn failed: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`, { cause: options.cause });
    this.name = 'TurnFailedError';
    this.executions = options.executions;
  }
}

export interface RunTurnOptions {
  model: LanguageModel;
  instructions: string;
  definitions: readonly ToolDefinition[];
  /** The operator's approval policy; it outranks the tools' own rules. */
  policy: PolicyConfig;
  messages: ModelMessage[];
  context: TurnContext;
  maxSteps: number;
  abortSignal?: AbortSignal;
  /** Model calls are retried by the AI SDK this many times before the turn fails. */
  maxRetries?: number;
  /** A model call that has not answered in this long counts as failed (and is retried). */
  modelTimeoutMs?: number;
  /** Calls a human edited before approving, by tool call id. */
  edits?: ReadonlyMap<string, EditNote>;
  onExecuted?: (report: ExecutionReport) => void;
  onBeforeExecute?: (toolCallId: string) => Promise<void>;
  /** Calls that ran without a card because auto-approve mode or a grant covers them. */
  onAutomaticApproval?: (approval: AutomaticApproval) => void;
  findGrant?: Parameters<typeof createToolApproval>[0]['findGrant'];
  /** Told before each tool runs, for progress status; failures are ignored. */
  onToolStart?: (toolName: string) => Promise<void> | void;
}

/**
 * Runs the model until it answers or pauses on calls that need approval. The same function serves a
 * fresh message and a resume: on resume the last message is the tool message holding the decisions,
 * and the AI SDK executes the approved calls before asking the model again.
 */
export async function runTurn(options: RunTurnOptions): Promise<TurnOutcome> {
  const executions: ExecutionRecord[] = [];
  const tools: ToolSet = createTurnTools({
    definitions: options.definitions,
    context: options.context,
    executions,
    ...(options.edits ? { edits: options.edits } : {}),
    ...(options.onExecuted ? { onExecuted: options.onExecuted } : {}),
    ...(options.onBeforeExecute ? { onBeforeExecute: options.onBeforeExecute } : {}),
  });
  try {
    const result = await generateText({
      model: options.model,
      instructions: options.instructions,
      messages: options.messages,
      tools,
      toolApproval: createToolApproval({
        definitions: options.definitions,
        context: options.context,
        policy: options.policy,
        ...(options.onAutomaticApproval ? { onAutomaticApproval: options.onAutomaticApproval } : {}),
        ...(options.findGrant ? { findGrant: options.findGrant } : {}),
      }),
      stopWhen: stepCountIs(options.maxSteps),
      maxRetries: options.maxRetries ?? 2,
      ...(options.modelTimeoutMs === undefined ? {} : { timeout: { stepMs: options.modelTimeoutMs } }),
      onToolExecutionStart: async ({ toolCall }) => {
        await Promise.resolve(options.onToolStart?.(toolCall.toolName)).catch(() => {});
      },
      ...(options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal }),
    });
    const approvalRequests = result.content
      .filter((part): part is ToolApprovalRequestOutput<ToolSet> => part.type === 'tool-approval-request' && !part.isAutomatic)
      .map((part): ApprovalRequest => ({
        kind: 'approval',
        approvalId: part.approvalId,
        toolCallId: part.toolCall.toolCallId,
        toolName: part.toolCall.toolName,
        input: part.toolCall.input,
      }));
    const humanTools = new Set(options.definitions.filter((definition) => !definition.execute).map((definition) => definition.name));
    const questions = result.toolCalls
      .filter((call) => humanTools.has(call.toolName) && !call.invalid)
      .map((call): ApprovalRequest => ({
        kind: 'question',
        approvalId: `q${randomUUID().replaceAll('-', '')}`,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
      }));
    return { responseMessages: result.responseMessages, text: result.text, approvalRequests: [...approvalRequests, ...questions] };
  } catch (error) {
    throw new TurnFailedError({ cause: error, executions });
  }
}
