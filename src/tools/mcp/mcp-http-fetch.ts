import { watchAnswerStreams } from './answer-stream-watch.js';
import { cappedFetch, DEFAULT_MCP_RESPONSE_BYTES } from './capped-fetch.js';
import { watchEventStream, type EventStreamLoss } from './event-stream-watch.js';
import { watchNotifications } from './notification-watch.js';

export interface McpHttpFetchOptions {
  /** The most bytes one answer may have (see `DEFAULT_MCP_RESPONSE_BYTES`). */
  maxResponseBytes: number | undefined;
  /** An answer stream broke (the request that waits on it is then failed with an error answer, see `watchAnswerStreams`). */
  onBroken: (error: unknown) => void;
  /** A notification the server sent, on an event stream or a call's answer stream. */
  onNotification: (method: string) => void;
  /** `reopened`: opened again after it was lost (not this connection's first stream). */
  onEventStreamOpened: (reopened: boolean) => void;
  onEventStreamLost: (loss: EventStreamLoss) => void;
}

/**
 * The fetch an HTTP MCP connection's transport is given: `@ai-sdk/mcp` does not export its transport,
 * so what one connection needs to hear is read from the fetch it is given, each watch wrapping the
 * next (the cap, answer streams, notifications, the event stream).
 */
export function createMcpHttpFetch(options: McpHttpFetchOptions): typeof fetch {
  // The transport reads each answer whole: the capped fetch ends a body past the cap with an error instead.
  const capped = cappedFetch({ maxBytes: options.maxResponseBytes ?? DEFAULT_MCP_RESPONSE_BYTES });
  // Inside the answer-stream watch, so that an event-stream answer past the cap fails its request with the
  // cap's message at once (the transport only reports the error to onerror: the call would wait out its timeout).
  const watched = watchAnswerStreams({ onBroken: options.onBroken, fetch: capped });
  // The client drops the server's notifications; its event streams are read for them here (after the cap).
  const notifications = watchNotifications({ onNotification: options.onNotification, fetch: watched });
  // The client gives up on the GET's event stream after a clean end or an error status: it is reopened here.
  let streamLost = false;
  return watchEventStream({
    onOpened: () => {
      // Opened again after a loss (the client reopens a broken stream itself): a tools/list_changed said
      // while no stream was open reached no one; the connection counts the reopen as one.
      const reopened = streamLost;
      streamLost = false;
      options.onEventStreamOpened(reopened);
    },
    onLost: (loss) => {
      streamLost = true;
      options.onEventStreamLost(loss);
    },
    fetch: notifications,
  });
}
