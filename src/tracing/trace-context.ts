import { type Context, context as contextApi, type Span, isSpanContextValid, ROOT_CONTEXT, type SpanContext, type SpanKind, SpanStatusCode, trace, type Tracer, type TracerProvider } from '@opentelemetry/api';

/** The name countersign's spans are reported under. */
export const TRACER_NAME = 'countersign';

/** The tracer for countersign's spans: from `provider` (tests, embedding), else the global one (a no-op until an SDK registers). */
export function countersignTracer(provider?: TracerProvider): Tracer {
  return (provider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` of the span active in `context`, to store with work that another process
 * (or the same one, hours later) continues: a queued item, a step waiting for people. Written by
 * hand rather than through the global propagator, which is a no-op unless an SDK installs one.
 */
export function traceparentOf(context: Context): string | undefined {
  const spanContext = trace.getSpanContext(context);
  if (!spanContext || !isSpanContextValid(spanContext)) return undefined;
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The remote span a stored `traceparent` names; undefined for a missing or malformed one (stored data is untrusted). */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!match) return undefined;
  const spanContext: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** A context whose parent is the span a stored `traceparent` names, or the root context. */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  const spanContext = spanContextOf(traceparent);
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

/**
 * Marks a span as failed with `error` (its message, and the exception as an event). Only for
 * countersign's own work (Redis, Slack, our code): the text of a tool's or the model's error can
 * quote what they returned, so those spans use `markFailedWithoutContent`.
 */
export function markFailed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** A failure as a span may show it: its kind in fixed words, nothing a tool or the model wrote. */
export interface ContentFreeFailure {
  /** The `error.type` attribute: an error's class (`errorType`) or a fixed word such as `exit_code`. */
  type: string;
  /** The status description, e.g. "exit code 3". */
  description: string;
}

/**
 * Marks a span as failed without the error's message, stack or exception event: an MCP tool's
 * error is its output, a command's is its stderr, and spans go to whatever backend the operator runs.
 */
export function markFailedWithoutContent(span: Span, failure: ContentFreeFailure): void {
  span.setAttribute('error.type', failure.type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: failure.description });
}

/** The class of `error` for `error.type`: its name when that is a plain identifier (any code can set a name), else `_OTHER`. */
export function errorType(error: unknown): string {
  const name = error instanceof Error ? error.name : undefined;
  return name !== undefined && /^[A-Za-z_$][\w$.]{0,63}$/.test(name) ? name : '_OTHER';
}

/**
 * Runs `work` inside a span that ends with it, marked as failed when it throws. The span is also
 * made active, so log lines written meanwhile carry its ids when a context manager is installed.
 */
export async function inSpan<RESULT>(
  options: {
    tracer: Tracer;
    name: string;
    parent: Context;
    kind?: SpanKind;
    attributes?: Record<string, string | number | boolean>;
    /** How a throw is shown when its text may come from a tool or the model; else by its message (`markFailed`). */
    describeFailure?: (error: unknown) => ContentFreeFailure;
  },
  work: (context: Context) => Promise<RESULT>,
): Promise<RESULT> {
  const span = options.tracer.startSpan(options.name, { ...(options.kind === undefined ? {} : { kind: options.kind }), ...(options.attributes ? { attributes: options.attributes } : {}) }, options.parent);
  const active = trace.setSpan(options.parent, span);
  try {
    return await contextApi.with(active, () => work(active));
  } catch (error) {
    if (options.describeFailure) markFailedWithoutContent(span, options.describeFailure(error));
    else markFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}
