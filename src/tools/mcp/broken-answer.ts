/**
 * These error answers are made up in the client's stream, and work only because of how `@ai-sdk/mcp`
 * (checked against 2.0.99, dist/index.js) handles one: its HTTP transport sends a POST's body as a
 * JSON string (else `requestId` in answer-stream-watch.ts finds no id and the call waits out its
 * timeout); it parses a POST's event stream with `EventSourceParserStream` and hands each
 * `event: message` to `onmessage`; the client's `onResponse` matches `Number(response.id)` against its
 * pending requests; and the `MCPClientError` it builds copies the answer's `code` and `data`
 * (`isBrokenAnswer` reads `data`). Pinned by mcp-server.broken-stream-spares-calls.test.ts (the call
 * fails at once with "Connection closed", not on its timeout) and mcp-server.broken-list-stream.test.ts
 * (a call whose own tools/list stream breaks is refused `server-unavailable`, which needs `data`).
 */

/** The `data` of the error answer made up for a request whose answer stream broke. */
const BROKEN_ANSWER = 'countersign/answer-stream-broken';

/** Its JSON-RPC code (MCP's "connection closed"), told apart from a server's own error by its `data`. */
const CONNECTION_CLOSED = -32000;

/** The code of the error answer made up for a request whose answer was larger than the cap (JSON-RPC's "internal error"). */
const INTERNAL_ERROR = -32603;

/**
 * The server-sent event that answers request `id` with an error after its answer stream broke: it fails
 * that request at once, and only it (see `watchAnswerStreams`), as closing the client would have failed it
 * ("Connection closed"; why it broke is reported with the connection's loss). It starts by ending an event
 * cut short, so the parser drops that one or reads it alone, not with the answer's lines.
 */
export function brokenAnswerEvent(id: string | number): string {
  return errorAnswerEvent(id, { code: CONNECTION_CLOSED, message: 'Connection closed', data: BROKEN_ANSWER });
}

/**
 * The server-sent event that answers request `id` with an error after its answer went past the size cap
 * (`message`, the cap's): the server answered, so this is not a broken connection (no `BROKEN_ANSWER`),
 * and the call ran and failed, as it does when an application/json answer is too large.
 */
export function tooLargeAnswerEvent(id: string | number, message: string): string {
  return errorAnswerEvent(id, { code: INTERNAL_ERROR, message });
}

function errorAnswerEvent(id: string | number, error: { code: number; message: string; data?: string }): string {
  return `\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error })}\n\n`;
}

/** Whether `error` is the one a request fails with once its answer stream broke: a connection failure, though it carries a code. */
export function isBrokenAnswer(error: unknown): boolean {
  return (error as { data?: unknown } | undefined)?.data === BROKEN_ANSWER;
}
