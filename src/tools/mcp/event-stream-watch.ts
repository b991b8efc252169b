import { reportingBody } from './reporting-body.js';

/** How the long-lived event stream a GET opens was lost, and whether `@ai-sdk/mcp` opens it again itself. */
export interface EventStreamLoss {
  /** What happened, for the log and the status (the server's status code, never its text). */
  reason: string;
  /** True when the client tries again on its own (twice, 1 s then 1.5 s later): the stream broke, or the GET failed. */
  reopensItself: boolean;
}

/**
 * A fetch for `@ai-sdk/mcp`'s HTTP transport that tells when the event stream its GET opens (where
 * the server's own messages come, `notifications/tools/list_changed` among them) is open, and when
 * it is lost. The client opens it again only after a break, twice, and never after a clean end (a
 * server or a proxy may end a long-lived response whenever it likes) or a reopen answered with an
 * error status (a proxy's 502 while the server restarts): from then on every tools/list_changed is
 * lost while the connection looks fine. The transport is not exported, so the fetch it is given is
 * the one place that sees it. A GET answered 405 (the server offers no such stream) is not a loss,
 * nor is an end the client asked for (it cancelled the stream, or aborted: the client closing), nor
 * a GET sent without an Mcp-Session-Id answered 400: the client opens the stream as its transport
 * starts, before initialize, and a server with sessions (the official SDKs) answers that 400; the
 * client opens it again with the session once initialized. Counted, it would make the first real
 * loss the second in a row (warned at once, waited for twice as long). Nor is a GET answered 409
 * while another GET of this fetch (one connection: one session) is open or under way: the client
 * opens the stream when initialize's answer is read and again when notifications/initialized is
 * answered if the first GET has no answer yet, and a server allowing one stream per session (the
 * official TypeScript SDK) answers the second 409 while the first is open. A 409 with no other
 * stream is a loss: the session's stream is held by no one the bot hears.
 */
export function watchEventStream(options: { onOpened: () => void; onLost: (loss: EventStreamLoss) => void; fetch?: typeof fetch }): typeof fetch {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  const tell = (listener: () => void) => {
    try {
      listener();
    } catch {
      // A listener that throws must not change what the transport reads.
    }
  };
  /** This connection's GETs sent and not answered yet, or open (until their stream ends, however). */
  let streams = 0;
  return async (input, init) => {
    if ((init?.method ?? 'GET').toUpperCase() !== 'GET') return base(input, init);
    streams += 1;
    let counted = true;
    const settle = () => {
      if (counted) streams -= 1;
      counted = false;
    };
    let response: Response;
    try {
      response = await base(input, init);
    } catch (error) {
      settle();
      if (!init?.signal?.aborted) tell(() => options.onLost({ reason: `its event stream could not be opened (${errorText(error)})`, reopensItself: true }));
      throw error;
    }
    if (!response.ok || !response.body) {
      settle();
      if (response.status === 405) return response;
      if (response.status === 400 && !new Headers(init?.headers).has('mcp-session-id')) return response;
      // A duplicate: the stream of the GET alongside (open, or answered later and told then) is the one heard.
      if (response.status === 409 && streams > 0) return response;
      tell(() => options.onLost({ reason: `its event stream was answered HTTP ${response.status}`, reopensItself: false }));
      return response;
    }
    tell(options.onOpened);
    const body = reportingBody({
      body: response.body,
      signal: init?.signal ?? undefined,
      onClosed: settle,
      onFailed: (error) => options.onLost({ reason: `its event stream broke (${errorText(error)})`, reopensItself: true }),
      onEnded: () => options.onLost({ reason: 'it ended its event stream', reopensItself: false }),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message}: ${cause}` : error.message;
}
