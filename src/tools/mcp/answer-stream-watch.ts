import { brokenAnswerEvent, tooLargeAnswerEvent } from './broken-answer.js';
import { ResponseTooLargeError } from './capped-fetch.js';
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
 *
 * The broken stream then ends, after the break is reported, with an error answer to its own request
 * (`brokenAnswerEvent`), so that request fails at once, and only it: every request over HTTP has its own
 * answer stream, and the others sent on the connection may be answered on theirs (closing the client to
 * fail the broken one would fail them all, though the server may be carrying them out).
 */
export function watchAnswerStreams(options: { onBroken: (error: unknown) => void; fetch?: typeof fetch }): typeof fetch {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  return async (input, init) => {
    const response = await base(input, init);
    const answersRequest = (init?.method ?? 'GET').toUpperCase() === 'POST' && (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (!answersRequest || !response.body) return response;
    const signal = init?.signal ?? undefined;
    // An answer past the size cap (the capped fetch this one wraps ends it so) is the server's, not a break.
    const onFailed = (error: unknown) => {
      if (!(error instanceof ResponseTooLargeError)) options.onBroken(error);
    };
    const reported = reportingBody({ body: response.body, signal, onFailed });
    const id = requestId(init?.body);
    const body = id === undefined ? reported : answeredWhenBroken({ body: reported, id, signal });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * The JSON-RPC id of the request a POST's body carries, if it is one: a notification or a batch has none
 * to answer, and nor has the client's own answer to a server's request (to a `ping`, a refused
 * elicitation): its id is in the server's numbering, and an error answer made up with it would fail
 * the client's own request that has that number.
 */
function requestId(body: RequestInit['body'] | undefined): string | number | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const { id, method } = JSON.parse(body) as { id?: unknown; method?: unknown };
    if (typeof method !== 'string') return undefined;
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `body` as it is, except that a read that fails ends it with an error answer to request `id` instead
 * (with the cap's message if the answer was too large), unless the request was aborted (it was failed already).
 */
function answeredWhenBroken(options: { body: ReadableStream<Uint8Array>; id: string | number; signal: AbortSignal | undefined }): ReadableStream<Uint8Array> {
  const reader = options.body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (options.signal?.aborted) return controller.error(error);
        const answer = error instanceof ResponseTooLargeError ? tooLargeAnswerEvent(options.id, error.message) : brokenAnswerEvent(options.id);
        controller.enqueue(new TextEncoder().encode(answer));
        controller.close();
        return;
      }
      if (chunk.done) controller.close();
      else controller.enqueue(chunk.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
