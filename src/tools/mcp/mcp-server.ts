import type { MCPClient } from '@ai-sdk/mcp';
import { NO_CONFIG_SECRETS } from '../config-secrets.js';
import { resolveTemplates } from '../http/header-templates.js';
import { createRedactor, redactingUrlCredentials, type Redactor } from '../http/redact.js';
import { createJsonSchemaValidator } from '../json-schema-validator.js';
import { createEventStreamKeeper, MAX_EVENT_STREAM_REOPEN_DELAY_MS, retryDelayMs } from './event-stream-keeper.js';
import { createMcpConnection } from './mcp-connection.js';
import { createMcpListMessages } from './mcp-list-messages.js';
import { createMcpProblems } from './mcp-problems.js';
import { DEFAULT_MCP_RETRY, type CreateMcpServerOptions, type McpServerHandle, type McpServerShared, type McpServerWarning } from './mcp-server-types.js';
import { createMcpToolDefinitions } from './mcp-tool-definition.js';
import { createMcpToolList } from './mcp-tool-list.js';
import { createRetiringClients } from './retiring-clients.js';
import { createMcpToolFilter } from './tool-filter.js';

export {
  DEFAULT_MCP_RETRY,
  type CreateMcpServerOptions,
  type McpRetryOptions,
  type McpServerHandle,
  type McpServerState,
  type McpServerStatus,
  type McpServerWarning,
  type McpToolDefinition,
  type McpToolMetadata,
} from './mcp-server-types.js';

/**
 * One configured MCP server: connects with `@ai-sdk/mcp`, turns its tools into ordinary tool
 * definitions (so they pass the same approval gate as every other tool: they are never handed to
 * the AI SDK as MCP tools), and keeps trying when the server fails to start or dies, with
 * exponential backoff. While it is down its last known tools stay registered and fail fast with an
 * explanation; a reconnect refreshes the list. After the server said its tools changed, its tools
 * are refused until the new list is read (the list from before may be wrong); one that fails is
 * asked again with backoff. Over HTTP, each call is also checked against a tools/list asked for it (see
 * `createMcpToolDefinitions`): a change may go unheard, and a turn's hold on its definitions must not
 * rest on hearing it. An event stream (where that is said) the server ended for good is reopened by
 * connecting again alongside the connection in use, and one the client reopened itself after a break,
 * or a connection's first one opened only after its tools/list was asked, is taken as a change of its
 * tools (one said before it opened is lost). A process that starts while it is down has no tools
 * of it at all: an approved call of one is answered "not run" by the turn (`createTurnTools`).
 */
export function createMcpServer(options: CreateMcpServerOptions): McpServerHandle {
  const { name, config, logger } = options;
  const log = logger.child({ mcpServer: name });
  const now = options.now ?? Date.now;
  const retry = { ...DEFAULT_MCP_RETRY, ...options.retry };
  const configSecrets = options.configSecrets ?? NO_CONFIG_SECRETS;
  const secrets: string[] = [...configSecrets.values];
  const headers = config.transport === 'http' ? resolveTemplates(config.headers, options.env, `mcpServers.${name}.headers`, options.problems) : undefined;
  const env = config.transport === 'stdio' ? resolveTemplates(config.env, options.env, `mcpServers.${name}.env`, options.problems) : undefined;
  secrets.push(...(headers?.secrets ?? []), ...(env?.secrets ?? []));
  // The loader refuses a url with credentials; should one reach here anyway, fetch's error quotes it
  // whole ("…a URL that includes credentials: https://user:password@…") into the notice and the logs.
  const redact: Redactor = redactingUrlCredentials(createRedactor(secrets));
  const filter = createMcpToolFilter(config);
  const validator = createJsonSchemaValidator();
  const shared: McpServerShared = {
    state: 'connecting',
    client: undefined,
    stdio: undefined,
    definitions: [],
    lastError: undefined,
    nextRetryAt: undefined,
    mismatch: { include: [], exclude: [], excludeGlobs: [] },
    staleList: undefined,
    listPending: false,
  };
  /**
   * Over HTTP, the event stream where tools/list_changed comes, lost for good when the server ends it
   * (see `watchEventStream`): the server is connected again alongside (`replacing`), the connection
   * in use serving calls until the new one is up, and its client is closed once its calls ended.
   */
  const eventStream = createEventStreamKeeper({
    initialDelayMs: retry.initialDelayMs,
    maxDelayMs: MAX_EVENT_STREAM_REOPEN_DELAY_MS,
    stableAfterMs: retry.stableAfterMs,
    now,
    reopen: () => connection.reconnectForEventStream(),
  });
  const retiring = createRetiringClients<MCPClient>();

  /** `retry.initialDelayMs` doubled per consecutive failure up to `maxDelayMs`, give or take 20 %. */
  function backoff(failed: number, maxDelayMs: number): number {
    return retryDelayMs({ initialDelayMs: retry.initialDelayMs, maxDelayMs, failed });
  }

  const problems = createMcpProblems({ name, log, redact, shared, options });
  // `connection` is made last, as it uses the rest: these call into it only once it is running.
  const { toDefinition } = createMcpToolDefinitions({
    name,
    config,
    validator,
    redact,
    shared,
    retiring,
    offeredNow: (client, signal) => lists.offeredNow(client, signal),
    lost: (reason) => connection.lost(reason),
  });
  const lists = createMcpToolList({ name, config, log, redact, filter, shared, problems, retry, backoff, toDefinition, lost: (reason) => connection.lost(reason), options });
  const connection = createMcpConnection({ name, config, options, log, now, retry, configSecrets, headers, env, redact, shared, problems, lists, eventStream, retiring, backoff });
  const { withheldMessage, excludeGlobMessage, includeMessage, staleMessage } = createMcpListMessages(name);

  return {
    name,
    start: () => connection.connect(),
    tools: () => shared.definitions,
    status: () => ({
      server: name,
      state: shared.state,
      tools: shared.definitions.map((definition) => definition.name),
      ...(shared.lastError === undefined ? {} : { error: shared.lastError }),
      ...(shared.nextRetryAt === undefined ? {} : { nextRetryAt: shared.nextRetryAt }),
      ...(shared.state === 'connected' && shared.stdio?.pid !== undefined ? { pid: shared.stdio.pid } : {}),
      ...(warnings().length > 0 ? { warnings: warnings() } : {}),
    }),
    close: () => connection.close(),
  };

  function warnings(): McpServerWarning[] {
    return [
      ...(shared.staleList === undefined ? [] : [{ code: 'mcp-tools-list-stale' as const, message: `${staleMessage(shared.staleList)}; its tools are refused until it is (listed again in the background).` }]),
      ...(shared.mismatch.exclude.length > 0 ? [{ code: 'mcp-exclude-matches-no-tool' as const, message: withheldMessage(shared.mismatch.exclude) }] : []),
      ...(shared.mismatch.excludeGlobs.length > 0 ? [{ code: 'mcp-exclude-glob-matches-no-tool' as const, message: excludeGlobMessage(shared.mismatch.excludeGlobs) }] : []),
      ...(shared.mismatch.include.length > 0 ? [{ code: 'mcp-include-matches-no-tool' as const, message: includeMessage(shared.mismatch.include) }] : []),
      ...(shared.state === 'connected' && eventStream.warning() !== undefined
        ? [{ code: 'mcp-event-stream-lost' as const, message: `MCP server ${name}: ${eventStream.warning()}, so a change of its tools may go unheard until it is open again (the tools offered may lag, but each call is checked against a tools/list made for it; connecting again in the background).` }]
        : []),
    ];
  }
}
