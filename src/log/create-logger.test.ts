import { Writable } from 'node:stream';
import { APICallError } from '@ai-sdk/provider';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './create-logger.js';

function capturingLogger(secrets: string[] = []) {
  const lines: Array<Record<string, unknown>> = [];
  let text = '';
  const destination = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination, secrets }), lines, text: () => text };
}

const TOKEN = 'xoxb-test-SECRET-123';

describe('errors in the log', () => {
  it('leave out what a library hangs on them (a request, its config and headers), at any depth, and keep what says what failed', () => {
    const { logger, lines, text } = capturingLogger();
    // The shape of an HTTP client's error (axios), wrapped as a Slack client wraps a request error.
    const original = Object.assign(new Error('socket hang up'), {
      code: 'ECONNRESET',
      config: { url: 'https://slack.com/api/chat.postMessage', headers: { Authorization: `Bearer ${TOKEN}` } },
      request: { _header: `POST /api/chat.postMessage HTTP/1.1\r\nAuthorization: Bearer ${TOKEN}\r\n` },
    });
    const wrapped = Object.assign(new Error(`A request error occurred: ${original.message}`), { code: 'slack_webapi_request_error', original, statusCode: 502, tryLater: true });
    logger.warn({ event: 'home-publish-failed', err: wrapped }, 'could not publish the App Home view');
    logger.warn({ event: 'mcp-server-problem', error: wrapped }, 'as `error`');

    expect(text()).not.toContain(TOKEN);
    expect(lines[0]).toMatchObject({
      err: { type: 'Error', message: 'A request error occurred: socket hang up', code: 'slack_webapi_request_error', statusCode: 502, tryLater: true, original: { message: 'socket hang up', code: 'ECONNRESET', omitted: ['config', 'request'] } },
    });
    expect(lines[1]).toMatchObject({ error: { code: 'slack_webapi_request_error', original: { code: 'ECONNRESET' } } });
  });

  it("leave out a model call's prompt and mask the credentials of its URL", () => {
    const { logger, text } = capturingLogger();
    const error = new APICallError({
      message: 'Internal Server Error',
      url: 'https://proxy-user:proxy-PASSWORD-1@llm.internal/v1/responses',
      requestBodyValues: { input: [{ role: 'user', content: 'the database password is hunter2-PROMPT' }] },
      statusCode: 500,
      responseBody: '{"error":"boom"}',
      isRetryable: true,
    });
    logger.error({ event: 'turn-failed', err: error }, 'agent turn failed');
    expect(text()).not.toContain('proxy-PASSWORD-1');
    expect(text()).not.toContain('hunter2-PROMPT');
    expect(JSON.parse(text())).toMatchObject({ err: { type: 'APICallError', statusCode: 500, isRetryable: true, url: 'https://[masked]@llm.internal/v1/responses' } });
  });

  it('scrub the known secret values from every line, wherever they are quoted', () => {
    const { logger, text } = capturingLogger([TOKEN, 'redis-PASSWORD-42"x']);
    logger.warn({ event: 'x', err: new Error(`refused ${TOKEN}`), detail: { nested: { deeper: 'auth redis-PASSWORD-42"x' } } }, `said ${TOKEN}`);
    expect(text()).not.toContain(TOKEN);
    expect(text()).not.toContain('redis-PASSWORD-42');
    expect(text()).toContain('[redacted]');
  });
});

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
