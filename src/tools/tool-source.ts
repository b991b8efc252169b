import type { Logger } from 'pino';
import type { ConfigProblem } from '../config/config-error.js';
import type { CountersignConfig } from '../config/config-schema.js';
import type { CommandRunnerKind } from './command/command-runner.js';
import type { CommandSlots } from './command/command-slots.js';
import type { ConfigSecrets } from './config-secrets.js';
import type { McpRetryOptions } from './mcp/mcp-server.js';
import type { ToolDefinition } from './tool-definition.js';

/**
 * Every kind of place a tool can come from. They all end up as plain `ToolDefinition`s and go
 * through the same gate (`createToolApproval` → `evaluateCallPolicy`); none is handed to the AI SDK
 * any other way. The gate conformance test enumerates this list.
 */
export const TOOL_SOURCE_KINDS = ['builtin', 'command', 'http', 'mcp', 'custom'] as const;
export type ToolSourceKind = (typeof TOOL_SOURCE_KINDS)[number];

/** Which source a registered tool came from. */
export interface ToolOrigin {
  kind: ToolSourceKind;
  /** `builtin`, `config`, `http`, `custom`, or `mcp:<server>`. */
  id: string;
}

export interface ToolSourceHealth {
  state: 'ready' | 'connecting' | 'unavailable' | 'closed';
  /** Why it is unavailable; never holds a configured secret. */
  error?: string;
  /** Epoch milliseconds of the next reconnection attempt. */
  nextRetryAt?: number;
  /** What is wrong with the source's config that only its tools show (an MCP server's `exclude` matching none of them): named in `/healthz`. */
  warnings?: readonly ToolSourceWarning[];
}

/** `code` names it (a log event, a `/healthz` warning); `message` says what follows and what to change. */
export interface ToolSourceWarning {
  code: string;
  message: string;
}

/**
 * One place tools come from: the config's command tools, `http_request`, the TypeScript tools, one
 * MCP server. A tool carries its own schema, annotations (MCP `metadata`) and `execute`; the source
 * says which tools it offers now and whether they work. `loadTools` knows nothing more about it.
 */
export interface ToolSource extends ToolOrigin {
  /** The tools offered now. A `dynamic` source's list may change after `start` (it calls `onToolsChanged`). */
  tools(): readonly ToolDefinition[];
  health(): ToolSourceHealth;
  /**
   * Tools that may appear after start-up: a name clash with them is skipped and reported at run
   * time. Clashes among the other sources' tools are configuration errors that stop the start.
   */
  readonly dynamic?: boolean;
  /** First connection attempt; resolves (never rejects) when it worked or failed for now. */
  start?(): Promise<void>;
  close?(): Promise<void>;
}

/** What a source factory is given; problems found while building are collected, then thrown together. */
export interface ToolSourceContext {
  config: CountersignConfig;
  customTools: readonly ToolDefinition[];
  logger: Logger;
  /** Where `${VAR}` placeholders are read, and the base environment of stdio MCP servers. */
  env: Record<string, string | undefined>;
  /** Every variable the config reads with `${VAR}`, and its value: no spawned tool inherits one, and no source shows one. */
  configSecrets: ConfigSecrets;
  /** Configuration problems; `loadTools` throws them as one `ConfigError`. */
  problems: ConfigProblem[];
  /** A dynamic source's tool list changed. */
  onToolsChanged(): void;
  /**
   * The source failed to start or died (said once until it recovers), or its tools are withheld
   * until its config changes (`needsConfigChange`: retrying does not help).
   */
  onProblem(sourceId: string, message: string, options?: { needsConfigChange?: boolean }): void;
  onRecovered(sourceId: string, message: string): void;
  mcpRetry?: Partial<McpRetryOptions>;
  fetch?: typeof fetch;
  /** Who spawns command tools: a small spawner process (default) or the bot process itself. */
  commandRunner?: CommandRunnerKind;
  /** What bounds the command tools running at once in this process (`command-slots.ts`); a default one unless given. */
  commandSlots?: CommandSlots;
}

/** Builds the sources of one kind from the config (none when that kind is not configured). */
export type ToolSourceFactory = (context: ToolSourceContext) => ToolSource[];

/** A source whose tools are fixed when it is built and always ready. */
export function createStaticToolSource(origin: ToolOrigin, tools: readonly ToolDefinition[]): ToolSource {
  return { ...origin, tools: () => tools, health: () => ({ state: 'ready' }) };
}
