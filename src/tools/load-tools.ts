import type { Logger } from 'pino';
import { ConfigError, type ConfigProblem } from '../config/config-error.js';
import type { CountersignConfig } from '../config/config-schema.js';
import { askUserTool } from './ask-user.js';
import { createCommandTool } from './command/command-tool.js';
import { createHttpRequestTool } from './http/http-request-tool.js';
import { createMcpServer, type McpRetryOptions, type McpServerHandle, type McpToolDefinition } from './mcp/mcp-server.js';
import { wireToolName } from './mcp/wire-tool-names.js';
import type { ToolDefinition } from './tool-definition.js';

export { withWireToolNames, wireToolName } from './mcp/wire-tool-names.js';
export type { McpToolDefinition, McpToolMetadata } from './mcp/mcp-server.js';

/**
 * Every place a tool can come from. They all end up as plain `ToolDefinition`s and go through the
 * same gate (`createToolApproval` → `evaluateCallPolicy`); none is handed to the AI SDK any other
 * way. The gate conformance test enumerates this list.
 */
export const TOOL_SOURCE_KINDS = ['builtin', 'command', 'http', 'mcp', 'custom'] as const;
export type ToolSourceKind = (typeof TOOL_SOURCE_KINDS)[number];

export interface ToolSource {
  kind: ToolSourceKind;
  /** `builtin`, `config`, `http`, `custom`, or `mcp:<server>`. */
  id: string;
}

/** Something wrong with a tool source at run time (an MCP server that failed or died). */
export interface ToolSourceProblem {
  /** `mcp:<server>`, or `tools` for a tool that could not be registered. */
  source: string;
  /** One line for a Slack notice; never holds a configured secret. */
  message: string;
}

export interface ToolSourceStatus {
  source: string;
  kind: ToolSourceKind;
  state: 'ready' | 'connecting' | 'unavailable' | 'closed';
  tools: string[];
  error?: string;
  /** Epoch milliseconds of the next reconnection attempt. */
  nextRetryAt?: number;
}

export interface LoadedTools {
  /**
   * Every tool, in a stable order (ask_user, command tools, http_request, custom tools, then MCP
   * tools). LIVE: this one array is updated in place when an MCP server connects later, reconnects
   * or changes its tools, so read it (or `find`) when you need it instead of copying it at start-up.
   */
  readonly tools: ToolDefinition[];
  find(name: string): ToolDefinition | undefined;
  sourceOf(name: string): ToolSource | undefined;
  /** Each source and whether it works now. */
  status(): ToolSourceStatus[];
  /** Sources that are down right now, e.g. to mention at the start of a turn. */
  problems(): ToolSourceProblem[];
  /** Called after `tools` changed; returns an unsubscribe function. */
  onChange(listener: (tools: readonly ToolDefinition[]) => void): () => void;
  /** Stops MCP servers and reconnection timers. */
  close(): Promise<void>;
}

export interface LoadToolsOptions {
  config: CountersignConfig;
  /** Tools written in TypeScript (`defineTool`). */
  customTools?: ToolDefinition[];
  logger: Logger;
  /** Where `${VAR}` placeholders are read, and the base environment of stdio MCP servers; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** An MCP server failed to start or died (said once until it recovers). Post it in Slack. */
  onSourceProblem?: (problem: ToolSourceProblem) => void;
  /** A source that had a problem works again. */
  onSourceRecovered?: (notice: ToolSourceProblem) => void;
  /** Backoff for MCP reconnects; tests shorten it. */
  mcpRetry?: Partial<McpRetryOptions>;
  /** For `http_request`; tests may inject one. */
  fetch?: typeof fetch;
}

/**
 * Builds every tool the bot offers: `ask_user`, the config's command tools, `http_request` (when
 * `http:` is configured), the custom tools, and the tools of each MCP server. Configuration
 * problems (an unset `${VAR}`, a duplicate name) throw a `ConfigError` listing all of them. MCP
 * servers are given their connect timeout to start; one that fails is reported through
 * `onSourceProblem` and retried with backoff, and the bot starts without its tools.
 */
export async function loadTools(options: LoadToolsOptions): Promise<LoadedTools> {
  const { config, logger } = options;
  const env = options.env ?? process.env;
  const problems: ConfigProblem[] = [];
  const sources = new Map<string, ToolSource>();
  const fixed: ToolDefinition[] = [];
  const addFixed = (definition: ToolDefinition, source: ToolSource) => {
    fixed.push(definition);
    if (!sources.has(definition.name)) sources.set(definition.name, source);
  };

  addFixed(askUserTool, { kind: 'builtin', id: 'builtin' });
  for (const tool of config.tools) addFixed(createCommandTool(tool), { kind: 'command', id: 'config' });
  if (config.http) {
    try {
      addFixed(createHttpRequestTool(config.http, { env, ...(options.fetch ? { fetch: options.fetch } : {}) }), { kind: 'http', id: 'http' });
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      problems.push(...error.problems);
    }
  }
  for (const tool of options.customTools ?? []) {
    const problem = customToolProblem(tool);
    if (problem) problems.push({ field: `tools.${String(tool?.name)}`, message: problem });
    else addFixed(tool, { kind: 'custom', id: 'custom' });
  }
  const names = new Set<string>();
  const wireNames = new Map<string, string>();
  for (const tool of fixed) {
    const wire = wireToolName(tool.name);
    const clash = wireNames.get(wire);
    if (names.has(tool.name)) problems.push({ field: `tools.${tool.name}`, message: 'is defined more than once' });
    else if (clash !== undefined) problems.push({ field: `tools.${tool.name}`, message: `is sent to the model as ${wire}, the same name as ${clash}` });
    names.add(tool.name);
    if (clash === undefined) wireNames.set(wire, tool.name);
  }

  const tools: ToolDefinition[] = [];
  const listeners = new Set<(tools: readonly ToolDefinition[]) => void>();
  const skipped = new Set<string>();
  const activeProblems = new Map<string, ToolSourceProblem>();
  let started = false;

  const servers: McpServerHandle[] = Object.entries(config.mcpServers ?? {}).map(([name, serverConfig]) => {
    const source = `mcp:${name}`;
    return createMcpServer({
      name,
      config: serverConfig,
      env,
      logger,
      problems,
      ...(options.mcpRetry ? { retry: options.mcpRetry } : {}),
      onToolsChanged: () => {
        if (started) rebuild();
      },
      onProblem: (message) => {
        const problem = { source, message };
        activeProblems.set(source, problem);
        safely(() => options.onSourceProblem?.(problem));
      },
      onRecovered: (message) => {
        activeProblems.delete(source);
        safely(() => options.onSourceRecovered?.({ source, message }));
      },
    });
  });
  if (problems.length > 0) throw new ConfigError({ problems });

  function rebuild(): void {
    const names = new Set(fixed.map((tool) => tool.name));
    const wires = new Set(fixed.map((tool) => wireToolName(tool.name)));
    const next = [...fixed];
    for (const server of servers) {
      for (const definition of server.tools()) {
        const wire = wireToolName(definition.name);
        if (names.has(definition.name) || wires.has(wire)) {
          if (!skipped.has(definition.name)) {
            skipped.add(definition.name);
            const message = `${definition.name} was not registered: another tool already uses the name ${names.has(definition.name) ? definition.name : wire}`;
            logger.warn({ event: 'tool-name-collision', tool: definition.name }, message);
            safely(() => options.onSourceProblem?.({ source: `mcp:${definition.metadata.server}`, message }));
          }
          continue;
        }
        names.add(definition.name);
        wires.add(wire);
        next.push(definition);
        sources.set(definition.name, { kind: 'mcp', id: `mcp:${definition.metadata.server}` });
      }
    }
    tools.splice(0, tools.length, ...next);
    for (const listener of listeners) safely(() => listener(tools));
  }

  function safely(callback: () => void): void {
    try {
      callback();
    } catch (error) {
      logger.error({ event: 'tool-source-listener-failed', err: error }, 'a tool source listener threw');
    }
  }

  await Promise.all(servers.map((server) => server.start()));
  started = true;
  rebuild();
  logger.info({ event: 'tools-loaded', tools: tools.map((tool) => tool.name) }, `${tools.length} tools loaded`);

  return {
    tools,
    find: (name) => tools.find((tool) => tool.name === name),
    sourceOf: (name) => (tools.some((tool) => tool.name === name) ? sources.get(name) : undefined),
    status() {
      const fixedSources = new Map<string, ToolSourceStatus>();
      for (const tool of fixed) {
        const source = sources.get(tool.name);
        if (!source) continue;
        const status = fixedSources.get(source.id) ?? { source: source.id, kind: source.kind, state: 'ready' as const, tools: [] };
        status.tools.push(tool.name);
        fixedSources.set(source.id, status);
      }
      return [
        ...fixedSources.values(),
        ...servers.map((server): ToolSourceStatus => {
          const status = server.status();
          return {
            source: `mcp:${server.name}`,
            kind: 'mcp',
            state: status.state === 'connected' ? 'ready' : status.state,
            tools: tools.filter((tool) => (tool as Partial<McpToolDefinition>).metadata?.server === server.name).map((tool) => tool.name),
            ...(status.error === undefined ? {} : { error: status.error }),
            ...(status.nextRetryAt === undefined ? {} : { nextRetryAt: status.nextRetryAt }),
          };
        }),
      ];
    },
    problems: () => [...activeProblems.values()],
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}

function customToolProblem(tool: ToolDefinition | undefined): string | undefined {
  if (typeof tool !== 'object' || tool === null) return 'is not a tool definition';
  if (typeof tool.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(tool.name)) return 'needs a name of letters, digits, _, - and . (at most 64)';
  if (typeof tool.description !== 'string' || tool.description.trim() === '') return 'needs a description';
  if (tool.inputSchema === undefined || tool.inputSchema === null) return 'needs an inputSchema (a zod schema or jsonSchema())';
  return undefined;
}
