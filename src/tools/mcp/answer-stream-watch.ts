import { reportingBody } from './reporting-body.js';

/**
 * A fetch for `@ai-sdk/mcp`'s HTTP transport that tells when the event stream answering a request
 * breaks: the server crashed or was restarted, or a proxy cut the connection, before the stream
 * ended. The transport only reports that to `onerror` (which the client hands to
 * `onUncaughtError`) and never fails the request, so the call would wait for its whole timeout and
 * then say "timed out". The transport is not exported, so it cannot be wrapped: the fetch it is
 * given is the one place that sees the break, and sees only that (not a parse error, not the
 * long-lived GET stream's reconnects, not an abort: a timeout, the caller's signal, or the client
 * closing).
 */
export function watchAnswerStreams(options: { onBroken: (error: unknown) => void; fetch?: typeof fetch }): typeof fetch {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  return async (input, init) => {
    const response = await base(input, init);
    const answersRequest = (init?.method ?? 'GET').toUpperCase() === 'POST' && (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (!answersRequest || !response.body) return response;
    const body = reportingBody({ body: response.body, signal: init?.signal ?? undefined, onFailed: options.onBroken });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
