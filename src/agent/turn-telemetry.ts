import { type Context, ROOT_CONTEXT, type Span, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { type ContentFreeFailure, countersignTracer, errorType, inSpan, markFailedWithoutContent } from '../tracing/trace-context.js';
import type { TraceExecution } from './tool-set.js';
import type { Telemetry, TelemetryOptions } from 'ai';

/** One model call (one step of a turn), as the metrics see it. */
export interface ModelCallReport {
  outcome: 'ok' | 'error';
  durationMs: number;
  inputTokens?: number;
  outputTokens?: number;
}

export interface TurnTelemetry {
  /** The AI SDK's `telemetry` option: our integration first, then any the application registered globally. */
  options: TelemetryOptions<never>;
  /** Tool executions as spans (`execute_tool <name>`), children of the turn. */
  traceExecution: TraceExecution;
  /** Ends the spans of model calls the SDK never reported the end of (an abort mid-stream). */
  close(): void;
}

/**
 * Reports each of the turn's model calls: a span (`chat <model>`, a child of `parent`, with the
 * token usage) and the `onModelCall` report the metrics take. Prompts and outputs are not recorded:
 * threads and tool output can hold secrets, and the spans go to whatever backend the operator runs.
 * Nor are error messages on these spans (the error's class only): a tool's error is its output, and
 * the model's errors quote what it wrote.
 */
export function createTurnTelemetry(options: { tracer?: Tracer; parent?: Context; onModelCall?: (report: ModelCallReport) => void }): TurnTelemetry {
  const tracer = options.tracer ?? countersignTracer();
  const parent = options.parent ?? ROOT_CONTEXT;
  // Model calls of one turn run one after another, so one call is open at a time per generation.
  const open = new Map<string, { span: Span; startedAt: number }>();
  const finish = (callId: string, report: Omit<ModelCallReport, 'durationMs'>, failure?: ContentFreeFailure) => {
    const call = open.get(callId);
    if (!call) return;
    open.delete(callId);
    if (failure !== undefined) markFailedWithoutContent(call.span, failure);
    call.span.end();
    options.onModelCall?.({ ...report, durationMs: performance.now() - call.startedAt });
  };
  const integration: Telemetry = {
    onLanguageModelCallStart(event) {
      const span = tracer.startSpan(
        `chat ${event.modelId}`,
        { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': event.provider, 'gen_ai.request.model': event.modelId } },
        parent,
      );
      open.set(event.callId, { span, startedAt: performance.now() });
    },
    onLanguageModelCallEnd(event) {
      const span = open.get(event.callId)?.span;
      const { inputTokens, outputTokens } = event.usage;
      span?.setAttributes({
        'gen_ai.response.finish_reasons': [event.finishReason],
        ...(inputTokens === undefined ? {} : { 'gen_ai.usage.input_tokens': inputTokens }),
        ...(outputTokens === undefined ? {} : { 'gen_ai.usage.output_tokens': outputTokens }),
      });
      finish(event.callId, { outcome: 'ok', ...(inputTokens === undefined ? {} : { inputTokens }), ...(outputTokens === undefined ? {} : { outputTokens }) });
    },
    onStepError(event) {
      finish(event.callId, { outcome: 'error' }, { type: errorType(event.error), description: 'model call failed' });
    },
    onAbort(event) {
      finish(event.callId, { outcome: 'error' }, { type: event.reason instanceof Error ? errorType(event.reason) : 'aborted', description: 'model call aborted' });
    },
  };
  const traceExecution: TraceExecution = (call, run) =>
    inSpan(
      {
        tracer,
        name: `execute_tool ${call.toolName}`,
        parent,
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.toolName, 'gen_ai.tool.call.id': call.toolCallId },
        describeFailure: (error) => ({ type: errorType(error), description: 'tool failed' }),
      },
      (active) =>
        run((failure) => {
          const span = trace.getSpan(active);
          if (span) markFailedWithoutContent(span, failure);
        }),
    );
  return {
    traceExecution,
    options: { functionId: 'countersign.turn', recordInputs: false, recordOutputs: false, integrations: [integration, ...globalIntegrations()] },
    close() {
      for (const callId of [...open.keys()]) finish(callId, { outcome: 'error' }, { type: 'turn_ended', description: 'the turn ended during the model call' });
    },
  };
}

/** Passing integrations replaces the ones registered with `registerTelemetry`; these keep them. */
function globalIntegrations(): Telemetry[] {
  return (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: Telemetry[] }).AI_SDK_TELEMETRY_INTEGRATIONS ?? [];
}
