/**
 * A fetch for `@ai-sdk/mcp`'s HTTP transport that tells the method of each notification the server
 * sends on an event stream: the long-lived one a GET opens (where Streamable HTTP and the legacy
 * protocol have the server's own messages come, `notifications/tools/list_changed` among them), or
 * one answering a request. The client drops every notification ("Unsupported message type", to
 * `onUncaughtError`) and the transport is not exported, so it cannot be wrapped: the fetch it is
 * given is the one place that sees them, as the stdio transport sees them on stdout. The bytes
 * pass through unchanged; what is read here only calls `onNotification`.
 */
export function watchNotifications(options: { onNotification: (method: string) => void; fetch?: typeof fetch }): typeof fetch {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  return async (input, init) => {
    const response = await base(input, init);
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (!eventStream || !response.ok || !response.body) return response;
    const body = response.body.pipeThrough(readingNotifications(options.onNotification));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * A notification is a few hundred bytes: the data of an event longer than this is not kept (a tool
 * result answering a call can weigh megabytes, and the transport holds its own copy already).
 */
const MAX_NOTIFICATION_CHARACTERS = 64 * 1024;

/** Passes the bytes on as they come, and parses them as server-sent events on the side. */
function readingNotifications(onNotification: (method: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const events = eventParser((data) => {
    for (const method of notificationMethods(data)) {
      try {
        onNotification(method);
      } catch {
        // A listener that throws must not change what the transport reads.
      }
    }
  });
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      events(decoder.decode(chunk, { stream: true }));
    },
  });
}

/**
 * The data of each `message` event (the default type) in text fed piece by piece, as the
 * EventSource spec reads it: lines end with CRLF, LF or CR (even across two pieces), `data:` lines
 * join with LF, an empty line ends the event.
 */
function eventParser(onMessage: (data: string) => void): (text: string) => void {
  const lineEnd = /\r\n?|\n/g;
  let line = '';
  let lineTooLong = false;
  let afterCarriageReturn = false;
  let type = '';
  let data: string[] = [];
  let dataLength = 0;
  let eventTooLong = false;

  function append(piece: string): void {
    if (line.length + piece.length > MAX_NOTIFICATION_CHARACTERS) lineTooLong = true;
    else line += piece;
  }

  function endLine(): void {
    const current = line;
    const tooLong = lineTooLong;
    line = '';
    lineTooLong = false;
    if (current === '' && !tooLong) {
      if (!eventTooLong && data.length > 0 && (type === '' || type === 'message')) onMessage(data.join('\n'));
      type = '';
      data = [];
      dataLength = 0;
      eventTooLong = false;
      return;
    }
    if (tooLong) {
      eventTooLong = true;
      return;
    }
    const colon = current.indexOf(':');
    const field = colon === -1 ? current : current.slice(0, colon);
    const value = colon === -1 ? '' : current.slice(current[colon + 1] === ' ' ? colon + 2 : colon + 1);
    if (field === 'event') type = value;
    else if (field === 'data') {
      dataLength += value.length + 1;
      if (dataLength > MAX_NOTIFICATION_CHARACTERS) eventTooLong = true;
      else data.push(value);
    }
  }

  return (text) => {
    let start = afterCarriageReturn && text.startsWith('\n') ? 1 : 0;
    afterCarriageReturn = false;
    lineEnd.lastIndex = start;
    for (let match = lineEnd.exec(text); match; match = lineEnd.exec(text)) {
      append(text.slice(start, match.index));
      endLine();
      start = match.index + match[0].length;
      // A CR that ends this piece may be the first half of a CRLF.
      if (match[0] === '\r' && start === text.length) afterCarriageReturn = true;
    }
    append(text.slice(start));
  };
}

/** The methods of the JSON-RPC notifications (a method, no id) in an event's data: one message or a batch. */
function notificationMethods(data: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return [];
  }
  const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  return messages.flatMap((message) => {
    if (typeof message !== 'object' || message === null || 'id' in message) return [];
    const { method } = message as { method?: unknown };
    return typeof method === 'string' ? [method] : [];
  });
}
