import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Structured JSON logs. Paths that could carry credentials are redacted even though the code never
 * logs them on purpose: a stray error object can include request headers.
 */
export function createLogger(options: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'countersign' },
      // Lines written while a span is active name it, so a trace and its log lines find each other.
      mixin: traceIds,
      redact: {
        paths: ['*.token', '*.botToken', '*.appToken', '*.signingSecret', '*.apiKey', '*.authorization', '*.headers.authorization', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    options.destination ?? process.stdout,
  );
}

/** `trace_id` and `span_id` of the active span (none without an OpenTelemetry context manager). */
export function traceIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
