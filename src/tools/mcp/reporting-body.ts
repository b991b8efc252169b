/**
 * `body` as it is, except that a read that fails and (with `onEnded`) its clean end are reported
 * first, unless its reader cancelled it or the request was aborted: those are ends the client asked
 * for; `onClosed` is told once of any end, those included, before a report. The streams
 * `@ai-sdk/mcp`'s HTTP transport reads are seen only by the fetch it is given, so this pass-through
 * is the one place to hear how they end.
 */
export function reportingBody(options: {
  body: ReadableStream<Uint8Array>;
  signal: AbortSignal | undefined;
  onFailed: (error: unknown) => void;
  onEnded?: () => void;
  onClosed?: () => void;
}): ReadableStream<Uint8Array> {
  const reader = options.body.getReader();
  let cancelled = false;
  let closed = false;
  const close = () => {
    if (closed || !options.onClosed) return;
    closed = true;
    try {
      options.onClosed();
    } catch {
      // As for a reporter.
    }
  };
  const report = (listener: () => void) => {
    if (cancelled || options.signal?.aborted) return;
    try {
      listener();
    } catch {
      // A reporter that throws must not change what the transport reads.
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        close();
        report(() => options.onFailed(error));
        controller.error(error);
        return;
      }
      if (!chunk.done) return controller.enqueue(chunk.value);
      close();
      const { onEnded } = options;
      if (onEnded) report(onEnded);
      controller.close();
    },
    cancel(reason) {
      cancelled = true;
      close();
      return reader.cancel(reason);
    },
  });
}
