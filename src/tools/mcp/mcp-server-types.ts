import type { MCPClient, McpToolAnnotations } from '@ai-sdk/mcp';
import type { Logger } from 'pino';
import type { ConfigProblem } from '../../config/config-error.js';
import type { McpServerConfig } from '../../config/mcp-config-schema.js';
import type { ProcessGroupGuard } from '../command/process-group-guard.js';
import type { ConfigSecrets } from '../config-secrets.js';
import type { ExecutableToolDefinition } from '../tool-definition.js';
import type { McpToolOutput } from './mcp-result.js';
import type { StdioTransport } from './stdio-transport.js';
import type { ToolFilterMismatch } from './tool-filter.js';

/** Where an MCP tool came from and what its server says about it (hints, not guarantees). */
export interface McpToolMetadata {
  source: 'mcp';
  server: string;
  /** The tool's own name on the server. */
  tool: string;
  title?: string;
  /** As the server declared them. Untrusted: a policy may look at them, the gate never relies on them. */
  annotations?: McpToolAnnotations;
}

export type McpToolDefinition = ExecutableToolDefinition<Record<string, unknown>, McpToolOutput> & { metadata: McpToolMetadata };

export type McpServerState = 'connecting' | 'connected' | 'unavailable' | 'closed';

export interface McpServerStatus {
  server: string;
  state: McpServerState;
  /** Bot-side names (`server.tool`) of the tools currently offered. */
  tools: string[];
  /** Why the server is unavailable (never holds a configured secret). */
  error?: string;
  /** Epoch milliseconds of the next connection attempt, while unavailable. */
  nextRetryAt?: number;
  /** The server process, for stdio servers that are running. */
  pid?: number;
  /**
   * What is wrong with its config as its last tool list shows (`include`/`exclude` entries matching no
   * tool), that its latest tool list could not be read (its tools are refused until one is), or that
   * its event stream is lost again and again (a change of its tools may go unheard); named in `/healthz`.
   */
  warnings?: McpServerWarning[];
}

/** `code` names it (a log event and a `/healthz` warning); `message` says what follows and what to change. */
export interface McpServerWarning {
  code: 'mcp-exclude-matches-no-tool' | 'mcp-exclude-glob-matches-no-tool' | 'mcp-include-matches-no-tool' | 'mcp-tools-list-stale' | 'mcp-event-stream-lost';
  message: string;
}

export interface McpRetryOptions {
  /** First delay after a failure; doubled per consecutive failure. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A connection that lasted this long resets the backoff when it is lost. */
  stableAfterMs: number;
}

export const DEFAULT_MCP_RETRY: McpRetryOptions = { initialDelayMs: 1000, maxDelayMs: 60_000, stableAfterMs: 60_000 };

export interface McpServerHandle {
  readonly name: string;
  /** Makes the first connection attempt; resolves when it succeeded or failed (never rejects). */
  start(): Promise<void>;
  tools(): readonly McpToolDefinition[];
  status(): McpServerStatus;
  close(): Promise<void>;
}

export interface CreateMcpServerOptions {
  name: string;
  config: McpServerConfig;
  /** Read for `${VAR}` placeholders and as the base environment of stdio servers. */
  env: Record<string, string | undefined>;
  /**
   * Every `${VAR}` the config reads, for any source: withheld from a stdio server's inherited
   * environment (its own `env` may still pass one), and redacted from all it says, since a server
   * can learn another source's secret some other way and print it.
   */
  configSecrets?: ConfigSecrets;
  logger: Logger;
  /** Collects configuration problems (unset variables); the caller throws them together. */
  problems: ConfigProblem[];
  /** The tool list changed (connected, refreshed). */
  onToolsChanged: () => void;
  /**
   * Failed to start or died, or its tools are withheld (`needsConfigChange`: an `exclude` name, one
   * without `*` or `?`, matches none of them; an unmatched glob only warns): said once until it
   * recovers, or until the problem changes.
   */
  onProblem: (message: string, options?: { needsConfigChange?: boolean }) => void;
  onRecovered: (message: string) => void;
  retry?: Partial<McpRetryOptions>;
  now?: () => number;
  /** Over HTTP, the most bytes one answer may have (see `DEFAULT_MCP_RESPONSE_BYTES`); tests lower it. */
  maxResponseBytes?: number;
  /** Kills a stdio server's process group if the bot process dies without closing it (see `StdioTransport`). */
  processGroups?: Pick<ProcessGroupGuard, 'watch' | 'unwatch'>;
}

/** The tools a tools/list offers (`include` and `exclude` applied), and the filter entries it does not bear out. */
export interface OfferedTools {
  definitions: McpToolDefinition[];
  mismatch: ToolFilterMismatch;
}

/**
 * What the parts of one MCP server (`createMcpServer`) read and write in common: the connection
 * (`createMcpConnection`) sets its state and client, the tool list (`createMcpToolList`) the tools
 * offered and whether they may run, and the definitions, problems and status read them.
 */
export interface McpServerShared {
  state: McpServerState;
  client: MCPClient | undefined;
  stdio: StdioTransport | undefined;
  definitions: McpToolDefinition[];
  lastError: string | undefined;
  nextRetryAt: number | undefined;
  /** The `include` and `exclude` entries the last tool list did not bear out. */
  mismatch: ToolFilterMismatch;
  /**
   * Why the latest tools/list failed (the server answered an error, or it timed out) after the server
   * said its tools changed; undefined once a list is read. The list from before may be wrong now (a
   * tool gone, a schema that takes a destructive flag, approvals bound to the old definition), so the
   * server's tools are refused as not run meanwhile, and the list is asked again with backoff.
   */
  staleList: string | undefined;
  /**
   * The server said its tools changed and the list that calls for is not read yet (it can take
   * connectTimeoutSeconds to answer): the list from before may be wrong already, so the server's tools
   * are refused as not run meanwhile, as after a failed list.
   */
  listPending: boolean;
}
