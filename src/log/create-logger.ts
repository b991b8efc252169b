import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger } from 'pino';
import { serializeError } from './error-serializer.js';
import { createSecretScrubber } from './secret-scrubber.js';

/**
 * Structured JSON logs. Nothing logs a credential on purpose, but errors carry what their library
 * sent: an error is written without what hangs on it (`serializeError`), paths that could carry
 * credentials are redacted, and the known secret values are scrubbed from every line as written.
 */
export function createLogger(options: {
  level: string;
  destination?: DestinationStream;
  /** Values never to write, wherever they appear (`environmentSecrets`). */
  secrets?: readonly (string | undefined)[];
}): Logger {
  const scrub = createSecretScrubber(options.secrets ?? []);
  return pino(
    {
      level: options.level,
      base: { service: 'countersign' },
      // Lines written while a span is active name it, so a trace and its log lines find each other.
      mixin: traceIds,
      serializers: { err: serializeError, error: serializeError },
      ...(scrub === undefined ? {} : { hooks: { streamWrite: scrub } }),
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
