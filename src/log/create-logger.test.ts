import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './create-logger.js';

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

describe('log lines and traces', () => {
  // What an application's OpenTelemetry SDK installs; removed again so no other test sees it.
  beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
  afterAll(() => context.disable());

  it('names the active span, across awaits, so a trace and its log lines find each other', async () => {
    const { logger, lines } = capturingLogger();
    const span = new BasicTracerProvider().getTracer('test').startSpan('countersign.turn');
    await context.with(trace.setSpan(context.active(), span), async () => {
      await new Promise((resolve) => setImmediate(resolve));
      logger.info('inside the turn');
    });
    logger.info('outside any span');
    span.end();

    expect(lines[0]).toMatchObject({ msg: 'inside the turn', trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
    expect(lines[1]?.msg).toBe('outside any span');
    expect(lines[1]).not.toHaveProperty('trace_id');
  });
});
