import type { Logger } from 'pino';
import { ConfigError, type ConfigProblem } from '../config/config-error.js';
import type { CountersignConfig } from '../config/config-schema.js';
import { checkToolNameLists, toolPatternsMatchingNoTool } from '../config/tool-name-lists.js';
import type { CommandRunnerKind } from './command/command-runner.js';
import type { CommandSlots } from './command/command-slots.js';
import { configSecrets } from './config-secrets.js';
import type { McpRetryOptions } from './mcp/mcp-server.js';
import { wireToolName } from './mcp/wire-tool-names.js';
import type { ToolDefinition } from './tool-definition.js';
import type { ToolOrigin, ToolSource, ToolSourceContext, ToolSourceFactory, ToolSourceKind, ToolSourceWarning } from './tool-source.js';
import { TOOL_SOURCE_FACTORIES } from './tool-sources.js';

export { withWireToolNames, wireToolName } from './mcp/wire-tool-names.js';
export type { McpToolDefinition, McpToolMetadata } from './mcp/mcp-server.js';
export { TOOL_SOURCE_KINDS, type ToolOrigin, type ToolSource, type ToolSourceFactory, type ToolSourceKind, type ToolSourceWarning } from './tool-source.js';

/** Something wrong with a tool source at run time (an MCP server that failed or died). */
export interface ToolSourceProblem {
  /** `mcp:<server>`, or `tools` for a tool that could not be registered. */
  source: string;
  /** One line for a Slack notice; never holds a configured secret. */
  message: string;
  /** Its tools stay away until the config changes (an MCP server's `exclude` matches none of its tools): no retry brings them back. */
  needsConfigChange?: boolean;
}

export interface ToolSourceStatus {
  source: string;
  kind: ToolSourceKind;
  state: 'ready' | 'connecting' | 'unavailable' | 'closed';
  tools: string[];
  error?: string;
  /** Epoch milliseconds of the next reconnection attempt. */
  nextRetryAt?: number;
  warnings?: readonly ToolSourceWarning[];
}

export interface LoadedTools {
  /**
   * Every tool, in a stable order (ask_user, command tools, http_request, custom tools, then MCP
   * tools). LIVE: this one array is updated in place when an MCP server connects later, reconnects
   * or changes its tools, so read it (or `find`) when you need it instead of copying it at start-up.
   */
  readonly tools: ToolDefinition[];
  find(name: string): ToolDefinition | undefined;
  sourceOf(name: string): ToolOrigin | undefined;
  /** Each source and whether it works now. */
  status(): ToolSourceStatus[];
  /** Sources that are down right now, or whose tools are withheld, e.g. to mention at the start of a turn. */
  problems(): ToolSourceProblem[];
  /** What is wrong with the sources' config as their tools show it now, for `/healthz` (see `ToolSourceHealth.warnings`). */
  warnings(): ToolSourceWarning[];
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
  /**
   * Where `${VAR}` placeholders are read, and the base environment of stdio MCP servers; default
   * `process.env`. A variable a placeholder names is withheld from every command tool and stdio MCP
   * server unless its own `env` passes it.
   */
  env?: Record<string, string | undefined>;
  /** An MCP server failed to start or died (said once until it recovers). Post it in Slack. */
  onSourceProblem?: (problem: ToolSourceProblem) => void;
  /** A source that had a problem works again. */
  onSourceRecovered?: (notice: ToolSourceProblem) => void;
  /** Backoff for MCP reconnects; tests shorten it. */
  mcpRetry?: Partial<McpRetryOptions>;
  /** For `http_request`; tests may inject one. */
  fetch?: typeof fetch;
  /** Who spawns command tools: `spawner` (default), a small child process, or `direct`, the bot process. */
  commandRunner?: CommandRunnerKind;
  /** What bounds the command tools running at once (`command-slots.ts`); default at most 32, fewer while memory is short. */
  commandSlots?: CommandSlots;
  /** Where tools come from; default every built-in source (`tool-sources.ts`). */
  sourceFactories?: readonly ToolSourceFactory[];
}

/**
 * Builds every tool the bot offers from every tool source (`tool-sources.ts`): `ask_user`, the
 * config's command tools, `http_request` (when `http:` is configured), the custom tools, and the
 * tools of each MCP server. Configuration problems (an unset `${VAR}`, a duplicate name) throw a
 * `ConfigError` listing all of them. Sources that connect (MCP servers) are given their connect
 * timeout to start; one that fails is reported through `onSourceProblem` and retried with backoff,
 * and the bot starts without its tools.
 */
export async function loadTools(options: LoadToolsOptions): Promise<LoadedTools> {
  const { logger } = options;
  const problems: ConfigProblem[] = [];
  const tools: ToolDefinition[] = [];
  const origins = new Map<string, ToolSource>();
  const listeners = new Set<(tools: readonly ToolDefinition[]) => void>();
  const skipped = new Set<string>();
  const activeProblems = new Map<string, ToolSourceProblem>();
  let started = false;

  const env = options.env ?? process.env;
  const context: ToolSourceContext = {
    config: options.config,
    customTools: options.customTools ?? [],
    logger,
    env,
    configSecrets: configSecrets({ config: options.config, env }),
    problems,
    onToolsChanged: () => {
      if (started) rebuild();
    },
    onProblem(source, message, { needsConfigChange = false } = {}) {
      const problem = { source, message, ...(needsConfigChange ? { needsConfigChange } : {}) };
      activeProblems.set(source, problem);
      safely(() => options.onSourceProblem?.(problem));
    },
    onRecovered(source, message) {
      activeProblems.delete(source);
      safely(() => options.onSourceRecovered?.({ source, message }));
    },
    ...(options.mcpRetry ? { mcpRetry: options.mcpRetry } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.commandRunner ? { commandRunner: options.commandRunner } : {}),
    ...(options.commandSlots ? { commandSlots: options.commandSlots } : {}),
  };
  const sources = (options.sourceFactories ?? TOOL_SOURCE_FACTORIES).flatMap((factory) => factory(context));
  const fixed = sources.filter((source) => !source.dynamic);
  problems.push(...nameClashes(fixed));
  // Only here are all the tools but MCP ones known: the TypeScript tools are not in the config file.
  problems.push(...checkToolNameLists({ config: options.config, toolNames: fixed.flatMap((source) => source.tools().map((tool) => tool.name)) }));
  if (problems.length > 0) throw new ConfigError({ problems });

  /** Lists every source's tools in order; a dynamic source's tool whose name is taken is left out and reported once. */
  function rebuild(): void {
    const names = new Set<string>();
    const wires = new Set<string>();
    const next: ToolDefinition[] = [];
    origins.clear();
    for (const source of sources) {
      for (const definition of source.tools()) {
        const wire = wireToolName(definition.name);
        if (names.has(definition.name) || wires.has(wire)) {
          if (!skipped.has(definition.name)) {
            skipped.add(definition.name);
            const message = `${definition.name} was not registered: another tool already uses the name ${names.has(definition.name) ? definition.name : wire}`;
            logger.warn({ event: 'tool-name-collision', tool: definition.name }, message);
            safely(() => options.onSourceProblem?.({ source: source.id, message }));
          }
          continue;
        }
        names.add(definition.name);
        wires.add(wire);
        next.push(definition);
        origins.set(definition.name, source);
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

  await Promise.all(sources.map((source) => source.start?.()));
  started = true;
  rebuild();
  logger.info({ event: 'tools-loaded', tools: tools.map((tool) => tool.name) }, `${tools.length} tools loaded`);
  if (sources.some((source) => source.dynamic)) warnToolPatternsMatchingNoTool({ config: options.config, tools, logger });

  return {
    tools,
    find: (name) => tools.find((tool) => tool.name === name),
    sourceOf(name) {
      const source = origins.get(name);
      return source ? { kind: source.kind, id: source.id } : undefined;
    },
    status: () =>
      sources.map((source): ToolSourceStatus => ({
        source: source.id,
        kind: source.kind,
        ...source.health(),
        tools: tools.filter((tool) => origins.get(tool.name) === source).map((tool) => tool.name),
      })),
    problems: () => [...activeProblems.values()],
    warnings: () => sources.flatMap((source) => source.health().warnings ?? []),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      await Promise.all(sources.map((source) => source.close?.()));
    },
  };
}

/**
 * A rule's or schedule's pattern left to run time by `checkToolNameLists` that the tools listed at
 * start-up do not bear out: likely a typo. The event keeps its first name, from when only rules were
 * checked, so alerts on it still fire.
 */
function warnToolPatternsMatchingNoTool({ config, tools, logger }: { config: CountersignConfig; tools: readonly ToolDefinition[]; logger: Logger }): void {
  for (const { field, pattern, owner, suggestion } of toolPatternsMatchingNoTool({ config, toolNames: tools.map((tool) => tool.name) })) {
    const hint = suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`;
    logger.warn(
      { event: 'policy-pattern-matches-no-tool', field, pattern },
      `${field} (${pattern}, in ${owner}) matches no tool the MCP servers listed at start-up${hint}; a server not connected yet lists its tools when it connects`,
    );
  }
}

/** Two fixed tools with one name, or with names the model would see as one, are configuration errors. */
function nameClashes(sources: readonly ToolSource[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const names = new Set<string>();
  const wireNames = new Map<string, string>();
  for (const tool of sources.flatMap((source) => source.tools())) {
    const wire = wireToolName(tool.name);
    const clash = wireNames.get(wire);
    if (names.has(tool.name)) problems.push({ field: `tools.${tool.name}`, message: 'is defined more than once' });
    else if (clash !== undefined) problems.push({ field: `tools.${tool.name}`, message: `is sent to the model as ${wire}, the same name as ${clash}` });
    names.add(tool.name);
    if (clash === undefined) wireNames.set(wire, tool.name);
  }
  return problems;
}
