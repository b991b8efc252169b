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
    const body = reportingFailure({ body: response.body, signal: init?.signal ?? undefined, onBroken: options.onBroken });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** `body` as it is, except that a read that fails (not aborted, not cancelled by its reader) is reported first. */
function reportingFailure(options: { body: ReadableStream<Uint8Array>; signal: AbortSignal | undefined; onBroken: (error: unknown) => void }): ReadableStream<Uint8Array> {
  const reader = options.body.getReader();
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (!cancelled && !options.signal?.aborted) {
          try {
            options.onBroken(error);
          } catch {
            // A reporter that throws must not change what the transport reads.
          }
        }
        controller.error(error);
        return;
      }
      if (chunk.done) controller.close();
      else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      cancelled = true;
      return reader.cancel(reason);
    },
  });
}
