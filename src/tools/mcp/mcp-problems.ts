import type { Logger } from 'pino';
import type { Redactor } from '../http/redact.js';
import { isBrokenAnswer } from './broken-answer.js';
import { createMcpListMessages } from './mcp-list-messages.js';
import type { CreateMcpServerOptions, McpServerShared } from './mcp-server-types.js';
import { StdioTransport, type ProcessExit } from './stdio-transport.js';

/**
 * Characters kept of why a server failed: it is the server's own text (stderr, an HTTP error body),
 * posted in every active thread and logged, so a chatty or hostile server cannot flood either.
 */
const MAX_ERROR_LENGTH = 400;

export interface McpProblemsOptions {
  name: string;
  log: Logger;
  redact: Redactor;
  shared: Pick<McpServerShared, 'lastError' | 'mismatch' | 'definitions'>;
  options: Pick<CreateMcpServerOptions, 'onProblem' | 'onRecovered'>;
}

/** What one MCP server says went wrong (`onProblem`), and that it is over (`onRecovered`): each said once. */
export function createMcpProblems({ name, log, redact, shared, options }: McpProblemsOptions) {
  const { withheldMessage } = createMcpListMessages(name);
  /** What the problem notices say now: a connection problem, or tools withheld by the config. */
  let said: { message: string; withheld: boolean } | undefined;

  return { report, settleProblem, shortReason, describeFailure };

  function report(message: string): void {
    log.warn({ event: 'mcp-server-problem', error: shared.lastError }, message);
    if (said) return;
    said = { message, withheld: false };
    options.onProblem(message);
  }

  /**
   * After each tool list: tools withheld for an `exclude` name matching none of them are said (again
   * if the names changed), and a problem said before that the list no longer shows is over.
   */
  function settleProblem(): void {
    if (shared.mismatch.exclude.length > 0) {
      const message = withheldMessage(shared.mismatch.exclude);
      if (said?.message === message) return;
      said = { message, withheld: true };
      options.onProblem(message, { needsConfigChange: true });
      return;
    }
    if (!said) return;
    const { withheld } = said;
    said = undefined;
    options.onRecovered(withheld ? `MCP server ${name}'s exclude list matches its tools now (${shared.definitions.length} tools offered).` : `MCP server ${name} is back (${shared.definitions.length} tools).`);
  }

  /** Redacted before it is cut, so a cut cannot leave half a secret. */
  function shortReason(reason: string): string {
    const kept = redact.head(reason, MAX_ERROR_LENGTH);
    return reason.length > MAX_ERROR_LENGTH ? `${kept}…` : kept;
  }

  function describeFailure(error: unknown, transport: unknown): string {
    if (transport instanceof StdioTransport && transport.exit && !transport.exit.expected) return describeExit(transport.exit, redact);
    return errorMessage(error);
  }
}

/** The exit and the end of stderr, redacted before the cut so the cut cannot leave part of a secret. */
export function describeExit(exit: ProcessExit, redact: Redactor): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : exit.code === null ? 'could not be started' : `exited with code ${exit.code}`;
  const tail = redact(exit.stderrTail.split('\n').slice(-3).join(' | ')).slice(-300);
  return tail ? `the process ${how}: ${tail}` : `the process ${how}`;
}

export function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}

/**
 * A failure of the connection rather than of the call: JSON-RPC errors carry a code and mean the
 * server answered; a closed connection, a refused socket or a dead session do not, nor does the error
 * answer made up for a request whose answer stream broke (`isBrokenAnswer`).
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') return isBrokenAnswer(error);
  if (error.name === 'AbortError' || /timed out|timeout/i.test(error.message)) return false;
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  if (typeof statusCode === 'number') return statusCode === 404 || statusCode >= 500;
  return /closed|not running|not connected|fetch failed|ECONNREFUSED|ECONNRESET|socket|network/i.test(errorMessage(error));
}

export type McpProblems = ReturnType<typeof createMcpProblems>;
