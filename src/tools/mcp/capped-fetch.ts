/**
 * What one answer of an MCP server over HTTP may weigh, in bytes: 16 MiB. `@ai-sdk/mcp` reads a
 * body whole (`response.json()`, `text()`, an event that has not ended), so without a cap a server
 * could fill the bot's memory with one answer. A tool result is cut to `outputLimit` characters
 * (at most 1,000,000) afterwards anyway; 16 MiB leaves room for a long tool list and JSON escaping.
 */
export const DEFAULT_MCP_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The error a body over the cap ends with; the call that waited for it fails with this message. */
function responseTooLargeMessage(maxBytes: number): string {
  return `the MCP server's answer is larger than ${maxBytes} bytes; it was not read`;
}

/** The error a body over the cap ends with (told apart from a broken connection by `watchAnswerStreams`). */
export class ResponseTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(responseTooLargeMessage(maxBytes));
    this.name = 'ResponseTooLargeError';
  }
}

/** Statuses whose responses have no body (`new Response` refuses one for them). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch for `@ai-sdk/mcp`'s HTTP transport whose response bodies end with an error past
 * `maxBytes`: the whole body of an answer to a request, or each event of the long-lived event
 * stream a GET opens (it carries any number of notifications, each of which must fit).
 */
export function cappedFetch(options: { maxBytes: number; fetch?: typeof fetch }): typeof fetch {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const eventStream = (init?.method ?? 'GET').toUpperCase() === 'GET' && (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const body = response.body.pipeThrough(byteCap({ maxBytes: options.maxBytes, perEvent: eventStream }));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** Passes bytes through until more than `maxBytes` came (since the last event's end, with `perEvent`), then errors. */
function byteCap(options: { maxBytes: number; perEvent: boolean }): TransformStream<Uint8Array, Uint8Array> {
  let counted = 0;
  // For events: the bytes of the current line, and whether the last byte was a CR (a CRLF is one line end).
  let lineBytes = 0;
  let afterCarriageReturn = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (!options.perEvent) {
        counted += chunk.length;
        if (counted > options.maxBytes) controller.error(new ResponseTooLargeError(options.maxBytes));
        else controller.enqueue(chunk);
        return;
      }
      for (const byte of chunk) {
        counted += 1;
        if (byte === LINE_FEED && afterCarriageReturn) {
          afterCarriageReturn = false;
          continue;
        }
        afterCarriageReturn = byte === CARRIAGE_RETURN;
        if (byte !== LINE_FEED && byte !== CARRIAGE_RETURN) {
          lineBytes += 1;
          continue;
        }
        // An empty line ends an event (server-sent events): the next one is counted afresh.
        if (lineBytes === 0) counted = 0;
        lineBytes = 0;
      }
      if (counted > options.maxBytes) controller.error(new ResponseTooLargeError(options.maxBytes));
      else controller.enqueue(chunk);
    },
  });
}
