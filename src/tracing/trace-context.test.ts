import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { decodeWorkItem, encodeWorkItem } from '../conversation/work-item.js';
import { contextFromTraceparent, errorType, traceparentOf } from './trace-context.js';

describe('trace context stored with work', () => {
  it('round-trips a span through its traceparent, as a queued item or a step carries it', () => {
    const span = new BasicTracerProvider().getTracer('test').startSpan('turn');
    const traceparent = traceparentOf(trace.setSpan(ROOT_CONTEXT, span));
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const restored = trace.getSpanContext(contextFromTraceparent(traceparent));
    expect(restored).toMatchObject({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, isRemote: true });
  });

  it('starts a new trace for a missing, malformed or all-zero traceparent (stored data is untrusted)', () => {
    for (const bad of [undefined, '', 'garbage', `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`, `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01; rm -rf`]) {
      expect(contextFromTraceparent(bad)).toBe(ROOT_CONTEXT);
    }
    expect(traceparentOf(ROOT_CONTEXT)).toBeUndefined();
  });

  it('keeps a queued item whose traceparent is not a string: the trace is lost, never the work', () => {
    const encoded = encodeWorkItem({ kind: 'resume', stepId: 's1', channel: 'C1', threadTs: '1.0' });
    const tampered = JSON.stringify({ ...JSON.parse(encoded), traceparent: { not: 'a string' } });
    expect(decodeWorkItem(tampered)).toEqual({ kind: 'resume', stepId: 's1', channel: 'C1', threadTs: '1.0' });
  });
});

describe('errorType', () => {
  it("names an error's class, and nothing else a thrower could have put in its name", () => {
    expect(errorType(new TypeError('alice 078-05-1120'))).toBe('TypeError');
    const named = new Error('x');
    named.name = 'rows: alice 078-05-1120';
    expect(errorType(named)).toBe('_OTHER');
    expect(errorType('a thrown string')).toBe('_OTHER');
  });
});
