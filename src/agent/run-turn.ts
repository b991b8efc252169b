import { CountersignError, ErrorCode } from '../errors/countersign-error.js';
import { randomUUID } from 'node:crypto';
import { stepCountIs, streamText, type FinishReason, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { closeCutOffStep, isCutOffAnswer, isCutOffStep, isFilteredAnswer, withoutCutOffAnswer } from './cut-off-step.js';
import { startModelWatchdog } from './model-watchdog.js';
import { withUniqueToolCallIds } from './unique-tool-call-ids.js';
import { createTurnRuns } from './turn-runs.js';
import type { Context, Tracer } from '@opentelemetry/api';
import { createTurnTelemetry, type ModelCallReport } from './turn-telemetry.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import {
  createToolApproval,
  createTurnTools,
  type ApprovedRun,
  type AutomaticApproval,
  type ExecutionRecord,
  type ExecutionReport,
  type GateBasis,
  type ScheduleApproval,
  type StartingCall,
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
  /** Model steps the turn took (each one model call); the caller holds a turn resumed inline to what is left of `maxSteps`. */
  steps: number;
  /** Calls waiting for a human (approvals and questions); empty when the turn finished. */
  approvalRequests: ApprovalRequest[];
  /**
   * The calls that ran (or started and threw), and those refused before their start (`started:
   * false`), as `TurnFailedError.executions`: what the thread is told of should the turn's work
   * never be recorded (a Redis that lost the thread's state).
   */
  executions: ExecutionRecord[];
  /**
   * Set when the model ended the last step some way other than `stop` or `tool-calls` (its output
   * limit, a content filter, …) while calling tools: the AI SDK ran none of that step's calls. They
   * are closed "not run" in `responseMessages` and nobody is asked about any of them, so the turn
   * ends unanswered and Try again asks the model again. `midAnswer`: the last step called no tools
   * but was cut off while writing its answer; that half answer is left out of `responseMessages`
   * (`text` still has it, to be shown marked as cut off).
   */
  cutOff?: { finishReason: FinishReason; midAnswer?: boolean };
  /**
   * The provider's content filter stopped the last step's answer as it was written (see
   * `isFilteredAnswer`): it stands as the model's answer, in `responseMessages` too, and the thread
   * is told the filter ended it there.
   */
  filtered?: true;
}

/** A turn that failed after tools already ran; `executions` must be recorded so they never re-run. */
export class TurnFailedError extends CountersignError {
  override readonly name = 'TurnFailedError';
  readonly code = ErrorCode.TurnFailed;
  declare readonly executions: ExecutionRecord[];
  constructor(options: { cause: unknown; executions: ExecutionRecord[] }) {
    super(`agent turn failed: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`, { cause: options.cause });
    // Not enumerable: loggers (pino's err serializer, util.inspect) copy an error's enumerable fields,
    // and these hold every call's raw input and whole output (see the turn-failed log line).
    Object.defineProperty(this, 'executions', { value: options.executions, enumerable: false, writable: false, configurable: false });
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
  /** The history no longer holds every call id the thread used (trimmed): every new call gets a fresh id. */
  freshToolCallIds?: boolean;
  /** Model calls are retried by the AI SDK this many times before the turn fails. */
  maxRetries?: number;
  /** A model call that has not answered in this long counts as failed (and is retried). */
  modelTimeoutMs?: number;
  /** Calls humans approved in the step this turn resumes (see `approvedRunsFor`), by tool call id. */
  approvedRuns?: ReadonlyMap<string, ApprovedRun>;
  /** Handed to tools (`ToolContext.assertHeld`): throws once this process no longer holds the thread. */
  assertHeld?: () => Promise<void>;
  /** Awaited just before a tool runs, to record that it started (with `call.automatic` for one let through without a card); a throw stops the call. */
  beforeExecute?: (call: StartingCall) => Promise<void>;
  afterExecute?: (report: ExecutionReport) => Promise<void> | void;
  /**
   * Calls that ran without a card because auto-approve mode, a grant or the schedule covers them:
   * told once each tool was invoked, after `beforeExecute`; a call refused before its start (its
   * grant revoked meanwhile) did not run and is not told.
   */
  onAutomaticApproval?: (approval: AutomaticApproval) => void;
  findGrant?: Parameters<typeof createToolApproval>[0]['findGrant'];
  /** For a scheduled turn: the tools its schedule runs without a card. */
  scheduleApproval?: ScheduleApproval;
  /** Told before each tool runs, for progress status; failures are ignored. */
  onToolStart?: (toolName: string) => Promise<void> | void;
  /**
   * Receives the answer as the model writes it, steps separated by a blank line; joined, the
   * deltas equal `TurnOutcome.text`. Called synchronously: a slow consumer must buffer.
   */
  onTextDelta?: (delta: string) => void;
  /** Told after each model call (one per step), for the metrics. */
  onModelCall?: (report: ModelCallReport) => void;
  /** The turn's span context: model calls and tool executions become its children. */
  traceContext?: Context;
  tracer?: Tracer;
}

/**
 * Runs the model until it answers or pauses on calls that need approval. The same function serves a
 * fresh message and a resume: on resume the last message is the tool message holding the decisions,
 * and the AI SDK executes the approved calls before asking the model again. A call id the model
 * repeats (in one response, or from earlier in the thread) is replaced before anything sees it.
 */
export async function runTurn(options: RunTurnOptions): Promise<TurnOutcome> {
  const executions: ExecutionRecord[] = [];
  const bases = new Map<string, GateBasis>();
  // The gate judges a call as it streams in, but the call runs only once its step ends well and
  // its checks pass: the tools tell the caller of a call let through without a card once it was
  // invoked, so a cut-off step's calls, or one whose grant was revoked, are never said to have run.
  const automatic = new Map<string, AutomaticApproval>();
  const runs = createTurnRuns();
  const telemetry = createTurnTelemetry({
    ...(options.tracer ? { tracer: options.tracer } : {}),
    ...(options.traceContext ? { parent: options.traceContext } : {}),
    ...(options.onModelCall ? { onModelCall: options.onModelCall } : {}),
  });
  const tools: ToolSet = createTurnTools({
    traceExecution: telemetry.traceExecution,
    definitions: options.definitions,
    context: options.context,
    executions,
    messages: options.messages,
    bases,
    ...(options.approvedRuns ? { approvedRuns: options.approvedRuns } : {}),
    automaticApprovals: automatic,
    ...(options.beforeExecute ? { beforeExecute: options.beforeExecute } : {}),
    ...(options.onAutomaticApproval ? { onAutomaticApproval: options.onAutomaticApproval } : {}),
    ...(options.afterExecute ? { afterExecute: options.afterExecute } : {}),
    ...(options.assertHeld ? { assertHeld: options.assertHeld } : {}),
    ...(options.findGrant ? { findGrant: options.findGrant } : {}),
    runs,
  });
  const watchdog = options.modelTimeoutMs === undefined ? undefined : startModelWatchdog({ timeoutMs: options.modelTimeoutMs });
  // Stops the stream when the turn fails: the AI SDK goes on reading it after we stop (see `TurnRuns`).
  const failing = new AbortController();
  const signals = [options.abortSignal, watchdog?.signal].filter((signal): signal is AbortSignal => signal !== undefined);
  const abortSignal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
  try {
    const result = streamText({
      // Before the AI SDK sees a call: approvals, gate decisions, markers and the history all go by call id.
      model: withUniqueToolCallIds(options.model, { freshIds: options.freshToolCallIds ?? false }),
      instructions: options.instructions,
      messages: options.messages,
      tools,
      // Stand-ins for tools this process does not have only answer the calls being resumed: the model is not offered them.
      activeTools: options.definitions.map((definition) => definition.name),
      toolApproval: createToolApproval({
        definitions: options.definitions,
        context: options.context,
        policy: options.policy,
        bases,
        ...(options.approvedRuns ? { approvedRuns: options.approvedRuns } : {}),
        onAutomaticApproval: (approval) => automatic.set(approval.toolCallId, approval),
        ...(options.findGrant ? { findGrant: options.findGrant } : {}),
        ...(options.scheduleApproval ? { scheduleApproval: options.scheduleApproval } : {}),
      }),
      stopWhen: stepCountIs(options.maxSteps),
      telemetry: telemetry.options,
      maxRetries: options.maxRetries ?? 2,
      onToolExecutionStart: async ({ toolCall }) => {
        watchdog?.toolStarted();
        await Promise.resolve(options.onToolStart?.(toolCall.toolName)).catch(() => {});
      },
      onToolExecutionEnd: () => watchdog?.toolFinished(),
      abortSignal: abortSignal ? AbortSignal.any([abortSignal, failing.signal]) : failing.signal,
      // Errors arrive as stream parts and are thrown below; the default handler would also log them.
      onError: () => {},
    });
    const humanTools = new Set(options.definitions.filter((definition) => !definition.execute).map((definition) => definition.name));
    const approvalRequests: ApprovalRequest[] = [];
    let questions: ApprovalRequest[] = [];
    let text = '';
    let stepHasText = false;
    let finishReason: FinishReason | undefined;
    let rawFinishReason: string | undefined;
    let stepCallCount = 0;
    let steps = 0;
    for await (const part of result.fullStream) {
      watchdog?.touch();
      if (part.type === 'error') throw part.error;
      if (part.type === 'abort') throw abortSignal?.reason ?? new Error('the turn was aborted');
      if (part.type === 'start-step') {
        stepHasText = false;
        stepCallCount = 0;
        // Only the last step's calls are waiting: earlier steps' calls ran.
        questions = [];
      } else if (part.type === 'text-delta' && part.text !== '') {
        const delta = !stepHasText && text.trim() !== '' ? `\n\n${part.text}` : part.text;
        stepHasText = true;
        text += delta;
        options.onTextDelta?.(delta);
      } else if (part.type === 'tool-approval-request' && !part.isAutomatic) {
        approvalRequests.push({
          kind: 'approval',
          approvalId: part.approvalId,
          toolCallId: part.toolCall.toolCallId,
          toolName: part.toolCall.toolName,
          input: part.toolCall.input,
        });
      } else if (part.type === 'tool-call') {
        if (!part.providerExecuted) stepCallCount += 1;
        if (humanTools.has(part.toolName) && !part.invalid) {
          questions.push({ kind: 'question', approvalId: `q${randomUUID().replaceAll('-', '')}`, toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
        }
      } else if (part.type === 'finish-step') {
        steps += 1;
        finishReason = part.finishReason;
        rawFinishReason = part.rawFinishReason;
      }
    }
    const responseMessages = await result.responseMessages;
    if (finishReason !== undefined && isCutOffStep({ finishReason, callCount: stepCallCount })) {
      // Only the last step can have asked for people: a card would let Bob approve one call of a
      // step whose other calls never ran (and then resume a history that lacks their results).
      const droppedApprovalIds = new Set(approvalRequests.map((request) => request.approvalId));
      return { responseMessages: closeCutOffStep({ responseMessages, finishReason, droppedApprovalIds }), text, steps, executions, approvalRequests: [], cutOff: { finishReason } };
    }
    const lastStep = finishReason === undefined ? undefined : { finishReason, rawFinishReason, callCount: stepCallCount, hasText: stepHasText };
    if (lastStep && isCutOffAnswer(lastStep)) {
      return { responseMessages: withoutCutOffAnswer(responseMessages), text, steps, executions, approvalRequests: [], cutOff: { finishReason: lastStep.finishReason, midAnswer: true } };
    }
    if (lastStep && isFilteredAnswer(lastStep)) return { responseMessages, text, steps, executions, approvalRequests: [], filtered: true };
    return { responseMessages, text, steps, executions, approvalRequests: [...approvalRequests, ...questions] };
  } catch (error) {
    const cause = abortSignal?.aborted ? abortSignal.reason : error;
    // No call starts from here, the ones under way are told to stop, and the failure waits for them:
    // a call the SDK ran behind the failure would have no record, and Try again would run it again.
    failing.abort(cause);
    await runs.close();
    throw new TurnFailedError({ cause, executions });
  } finally {
    watchdog?.stop();
    telemetry.close();
  }
}
