import { CountersignError, ErrorCode, hasErrorCode } from '../errors/countersign-error.js';

/** Why a tool refused a call at its start. */
export type ToolNotStartedReason =
  // An MCP server's tools are withheld, it no longer offers the tool (or redefined it since the turn
  // holding the definition began), it is not connected, or its latest tool list could not be read or
  // is not read yet (the one before may be wrong).
  | 'withheld'
  | 'not-offered'
  | 'server-unavailable'
  | 'list-stale'
  // The turn stopped (it failed, or the bot is stopping) before the call was sent: an MCP call over HTTP
  // waiting for its tools/list, say.
  | 'aborted'
  // A command tool's runner is closed (the bot is stopping): nothing was spawned.
  | 'runner-closed'
  // A command tool's command was never let run: aborted or timed out before its start (waiting for a
  // slot, or held until the watchdog watched it), no watchdog to hold it, no working directory.
  | 'command-not-started'
  // http_request's URL is not the one checked or not under a base, or a header cannot be sent: nothing was sent.
  | 'url-refused'
  | 'header-refused'
  // The tool's own check of the input, again at the start (an approved input may have been edited since).
  | 'invalid-input';

/**
 * Thrown by a tool's `execute` that refuses a call before anything reaches what it drives: the turn
 * records it as not started (its audit says "not run", nobody is told it ran without a card), as
 * for a grant gone before the start, not as a call that ran and failed, which may have had effects.
 * The message is what the model is told.
 */
export class ToolNotStartedError extends CountersignError {
  override readonly name = 'ToolNotStartedError';
  readonly code = ErrorCode.ToolNotStarted;
  readonly toolName: string;
  readonly reason: ToolNotStartedReason;

  constructor({ toolName, reason, message }: { toolName: string; reason: ToolNotStartedReason; message: string }) {
    super(message);
    this.toolName = toolName;
    this.reason = reason;
  }
}

/** By code, not `instanceof`, so a duplicate copy of this module is recognised too. */
export function isToolNotStartedError(error: unknown): error is ToolNotStartedError {
  return hasErrorCode(error, ErrorCode.ToolNotStarted);
}
