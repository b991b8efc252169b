import { createMCPClient, type ListToolsResult, type MCPClient, type MCPTransport, type McpToolAnnotations } from '@ai-sdk/mcp';
import { jsonSchema, type JSONSchema7 } from 'ai';
import type { Logger } from 'pino';
import type { ConfigProblem } from '../../config/config-error.js';
import type { McpServerConfig } from '../../config/mcp-config-schema.js';
import { wholeMilliseconds } from '../../config/duration.js';
import { commandEnvironment, withholding } from '../command/command-environment.js';
import type { ProcessGroupGuard } from '../command/process-group-guard.js';
import { NO_CONFIG_SECRETS, type ConfigSecrets } from '../config-secrets.js';
import { fingerprintOf, fingerprintOfParts } from '../definition-fingerprint.js';
import { resolveTemplates } from '../http/header-templates.js';
import { createRedactor, redactingUrlCredentials, type Redactor } from '../http/redact.js';
import { createJsonSchemaValidator } from '../json-schema-validator.js';
import type { ExecutableToolDefinition } from '../tool-definition.js';
import { ToolNotStartedError, type ToolNotStartedReason } from '../tool-not-started-error.js';
import { watchAnswerStreams } from './answer-stream-watch.js';
import { cappedFetch, DEFAULT_MCP_RESPONSE_BYTES } from './capped-fetch.js';
import { createEventStreamKeeper, MAX_EVENT_STREAM_REOPEN_DELAY_MS, retryDelayMs } from './event-stream-keeper.js';
import { watchEventStream, type EventStreamLoss } from './event-stream-watch.js';
import { formatMcpResult, type McpToolOutput } from './mcp-result.js';
import { watchNotifications } from './notification-watch.js';
import { redactListedTool } from './redact-listed-tool.js';
import { createRetiringClients } from './retiring-clients.js';
import { DEFAULT_DISCOVERY_TIMEOUT_MS, StdioTransport, type ProcessExit } from './stdio-transport.js';
import { createMcpToolFilter, type ToolFilterMismatch } from './tool-filter.js';

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

/**
 * The longest wait between two tries of a tools/list that failed on a connected server (from
 * `initialDelayMs`, doubled per failure): its tools are refused meanwhile, so sooner than a reconnect.
 */
const MAX_LIST_RETRY_DELAY_MS = 30_000;

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

/** Tool names a policy rule can refer to: `server.tool`, with dots allowed inside the tool name. */
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/**
 * Characters kept of why a server failed: it is the server's own text (stderr, an HTTP error body),
 * posted in every active thread and logged, so a chatty or hostile server cannot flood either.
 */
const MAX_ERROR_LENGTH = 400;

/**
 * One configured MCP server: connects with `@ai-sdk/mcp`, turns its tools into ordinary tool
 * definitions (so they pass the same approval gate as every other tool: they are never handed to
 * the AI SDK as MCP tools), and keeps trying when the server fails to start or dies, with
 * exponential backoff. While it is down its last known tools stay registered and fail fast with an
 * explanation; a reconnect refreshes the list. After the server said its tools changed, its tools
 * are refused until the new list is read (the list from before may be wrong); one that fails is
 * asked again with backoff. Over HTTP, an event stream (where that is said) the
 * server ended for good is reopened by connecting again alongside the connection in use, and one the
 * client reopened itself after a break is taken as a change of its tools (one said meanwhile is lost). A process that starts while it is down has no tools
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
  /** What the server listed for each definition, to keep unchanged tools' definitions on refresh. */
  const listedAs = new WeakMap<McpToolDefinition, string>();
  /** Each definition's `definitionFingerprintOf`, worked out when it is made: a call compares the one it holds with the one offered now. */
  const fingerprints = new WeakMap<McpToolDefinition, string>();

  let state: McpServerState = 'connecting';
  let client: MCPClient | undefined;
  let stdio: StdioTransport | undefined;
  /**
   * The connection the latest attempt is setting up, until it is up or failed: one overtaken by a later
   * attempt, a loss or the close is dropped when it ends. What a transport reports is told apart by
   * its own connection (see `inUse`), never by which attempt is the latest: a reconnect alongside that
   * fails leaves the connection in use as heard as before.
   */
  let pending: Connection | undefined;
  let definitions: McpToolDefinition[] = [];
  let lastError: string | undefined;
  let failures = 0;
  let connectedAt: number | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let nextRetryAt: number | undefined;
  /** What the problem notices say now: a connection problem, or tools withheld by the config. */
  let said: { message: string; withheld: boolean } | undefined;
  /** The `include` and `exclude` entries the last tool list did not bear out. */
  let mismatch: ToolFilterMismatch = { include: [], exclude: [], excludeGlobs: [] };
  let closed = false;
  let connecting: Promise<void> | undefined;
  /**
   * The server said its tools changed before the connection was up: with the answer to the first
   * tools/list, say, when it announces tools it was still loading. Read again once connected.
   */
  let toolsChangedWhileConnecting = false;
  /**
   * Each tools/list asked gets the next number; `listApplied` is that of the list the definitions
   * come from. An answer older than the list applied is dropped, or it would undo what the newer
   * list called for (withhold the tools for an exclude name the server no longer lists, or offer
   * them again): a connect lists anew while a refresh of the connection before may still be answered.
   */
  let listAsked = 0;
  let listApplied = 0;
  /**
   * The tools/list under way on a connection after the server said its tools changed, and whether
   * it said so again meanwhile (`again`: read once more after this one). A server that says it 200
   * times in a row (a loop, tools registered one by one) is listed twice, not 200 times at once with
   * each answer up to maxResponseBytes held together.
   */
  let listing: { client: MCPClient; again: boolean } | undefined;
  /**
   * Why the latest tools/list failed (the server answered an error, or it timed out) after the server
   * said its tools changed; undefined once a list is read. The list from before may be wrong now (a
   * tool gone, a schema that takes a destructive flag, approvals bound to the old definition), so the
   * server's tools are refused as not run meanwhile, and the list is asked again with backoff.
   */
  let staleList: string | undefined;
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
    reopen: () => reconnectForEventStream(),
  });
  let replacing: Promise<void> | undefined;
  const retiring = createRetiringClients<MCPClient>();
  /**
   * The server said its tools changed and the list that calls for is not read yet (it can take
   * connectTimeoutSeconds to answer): the list from before may be wrong already, so the server's tools
   * are refused as not run meanwhile, as after a failed list.
   */
  let listPending = false;
  let listFailures = 0;
  let listRetryTimer: NodeJS.Timeout | undefined;

  function report(message: string): void {
    log.warn({ event: 'mcp-server-problem', error: lastError }, message);
    if (said) return;
    said = { message, withheld: false };
    options.onProblem(message);
  }

  /**
   * After each tool list: tools withheld for an `exclude` name matching none of them are said (again
   * if the names changed), and a problem said before that the list no longer shows is over.
   */
  function settleProblem(): void {
    if (mismatch.exclude.length > 0) {
      const message = withheldMessage(mismatch.exclude);
      if (said?.message === message) return;
      said = { message, withheld: true };
      options.onProblem(message, { needsConfigChange: true });
      return;
    }
    if (!said) return;
    const { withheld } = said;
    said = undefined;
    options.onRecovered(withheld ? `MCP server ${name}'s exclude list matches its tools now (${definitions.length} tools offered).` : `MCP server ${name} is back (${definitions.length} tools).`);
  }

  function withheldMessage(unmatched: readonly string[]): string {
    return (
      `MCP server ${name}: its exclude lists ${globsMatchingNone(unmatched)} of the tools it lists, so none of its tools are offered ` +
      `(a misspelled exclude would offer the tool it was meant to hide). Correct mcpServers.${name}.exclude.`
    );
  }

  function excludeGlobMessage(unmatched: readonly string[]): string {
    return (
      `MCP server ${name}: its exclude lists ${globsMatchingNone(unmatched)} of the tools it lists; its tools are offered, ` +
      `and a tool it lists later that ${unmatched.length === 1 ? 'the glob matches' : 'the globs match'} is hidden. If it is a typo, correct mcpServers.${name}.exclude.`
    );
  }

  function includeMessage(unmatched: readonly string[]): string {
    return `MCP server ${name}: its include lists ${globsMatchingNone(unmatched)} of the tools it lists; the tools the rest of the list matches are offered. Correct mcpServers.${name}.include.`;
  }

  /** `retry.initialDelayMs` doubled per consecutive failure up to `maxDelayMs`, give or take 20 %. */
  function backoff(failed: number, maxDelayMs: number): number {
    return retryDelayMs({ initialDelayMs: retry.initialDelayMs, maxDelayMs, failed });
  }

  function scheduleRetry(): void {
    if (closed) return;
    const delay = backoff(failures, retry.maxDelayMs);
    nextRetryAt = now() + delay;
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      nextRetryAt = undefined;
      void connect();
    }, delay);
    retryTimer.unref();
  }

  /** Whether `connection` is the one serving calls now (a connection replaced or being set up is not). */
  function inUse(connection: Connection): boolean {
    return connection.client !== undefined && connection.client === client;
  }

  function createTransport(connection: Connection): MCPTransport | { type: 'http'; url: string; headers: Record<string, string>; redirect: 'error'; fetch: typeof fetch } {
    if (config.transport === 'http') {
      // An answer stream that breaks fails what waits on it (the client is closed: "Connection closed"),
      // as a stdio server's exit does; nothing is sent again, since the call may have run.
      const watched = watchAnswerStreams({
        onBroken: (error) => {
          if (inUse(connection)) return lost(`the connection broke while it was answering (${errorMessage(error)})`);
          // A connection replaced (a call still under way on it) or being set up: its own client is
          // closed, failing what waits on it at once; the connection in use goes on.
          void connection.client?.close().catch(() => {});
        },
      });
      // The transport reads each answer whole: the capped fetch ends a body past the cap with an error instead.
      const capped = cappedFetch({ maxBytes: options.maxResponseBytes ?? DEFAULT_MCP_RESPONSE_BYTES, fetch: watched });
      // The client drops the server's notifications; its event streams are read for them here (after the cap).
      const notifications = watchNotifications({ onNotification: (method) => notified(connection, method), fetch: capped });
      // The client gives up on the GET's event stream after a clean end or an error status: it is reopened here.
      let streamLost = false;
      const fetch = watchEventStream({
        onOpened: () => {
          eventStreamOpened(connection);
          // Opened again after a loss (the client reopens a broken stream itself): a tools/list_changed said
          // while no stream was open reached no one (a server without an event store does not say it again),
          // so the reopen counts as one, and the tools are refused until they are listed again.
          if (streamLost) notified(connection, 'notifications/tools/list_changed');
          streamLost = false;
        },
        onLost: (loss) => {
          streamLost = true;
          eventStreamLost(connection, loss);
        },
        fetch: notifications,
      });
      return { type: 'http', url: config.url, headers: headers?.values ?? {}, redirect: 'error', fetch };
    }
    const transport = new StdioTransport({
      command: config.command,
      args: config.args,
      // Like command tools: the bot's environment minus its secrets and the config's, plus what the config adds.
      env: commandEnvironment({ parentEnvironment: options.env, environment: withholding(configSecrets.variables, env?.values) }),
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      // Redacted by the transport, before a long line is cut.
      redact,
      onStderr: (line) => log.debug({ event: 'mcp-server-stderr' }, line),
      onExit: (exit) => {
        if (inUse(connection) && !exit.expected) lost(describeExit(exit, redact));
      },
      onNotification: (method) => notified(connection, method),
      // Garbage on stdout, a late answer the client no longer expects: logged, the connection goes on.
      onTransportError: (error) => log.warn({ event: 'mcp-transport-error', err: redact(errorMessage(error)) }, `MCP server ${name}: ${redact(error.message)}`),
      // Half the connect budget, at most 5 s: a server without discovery still has time to initialize.
      discoveryTimeoutMs: Math.min(DEFAULT_DISCOVERY_TIMEOUT_MS, Math.round(wholeMilliseconds(config.connectTimeoutSeconds, 's') / 2)),
      ...(options.processGroups ? { processGroups: options.processGroups } : {}),
    });
    stdio = transport;
    return transport;
  }

  function connect(): Promise<void> {
    if (closed) return Promise.resolve();
    connecting ??= attempt().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  /** Connects; `replace`: alongside the connection in use, which serves calls until this one is up (see `eventStream`). */
  async function attempt(replace = false): Promise<void> {
    // The connection in use, if replaced, serves calls and is heard until this one is up (and for
    // good if this one fails): it is `client` until the swap.
    const connection: Connection = {};
    pending = connection;
    if (!replace) state = 'connecting';
    toolsChangedWhileConnecting = false;
    const timeoutMs = wholeMilliseconds(config.connectTimeoutSeconds, 's');
    let newClient: MCPClient | undefined;
    const transport = createTransport(connection);
    try {
      newClient = await createMCPClient({
        transport,
        clientName: 'countersign',
        onUncaughtError: (error) => log.debug({ event: 'mcp-client-error', err: redact(errorMessage(error)) }, 'MCP client error'),
        initializationOptions: { timeout: timeoutMs },
      });
      connection.client = newClient;
      const listed = await listAllTools(newClient, timeoutMs);
      if (closed || pending !== connection) {
        await newClient.close().catch(() => {});
        return;
      }
      pending = undefined;
      const replaced = client;
      client = newClient;
      if (replaced) retiring.retire(replaced);
      if (transport instanceof StdioTransport) transport.clearStderr();
      state = 'connected';
      connectedAt = now();
      lastError = undefined;
      // Newer than anything a lost connection was still asking for.
      listAsked += 1;
      listApplied = listAsked;
      listRead();
      applyToolList(listed);
      log.info({ event: 'mcp-server-connected', tools: definitions.map((definition) => definition.name) }, `MCP server ${name} connected`);
      settleProblem();
      if (toolsChangedWhileConnecting) {
        toolsChangedWhileConnecting = false;
        refresh();
      }
    } catch (error) {
      await newClient?.close().catch(() => {});
      if (transport instanceof StdioTransport) await transport.close().catch(() => {});
      if (closed || pending !== connection) return;
      pending = undefined;
      if (replace) return replaceFailed(error);
      // Let the process exit be recorded first: it usually says more than "connection closed".
      await new Promise((resolve) => setImmediate(resolve));
      // Closed meanwhile: a closed server is not marked unavailable, said to have failed or retried.
      if (closed) return;
      failures += 1;
      state = 'unavailable';
      lastError = shortReason(describeFailure(error, transport));
      report(`MCP server ${name} could not be started: ${lastError}. Retrying in the background; its tools are unavailable until then.`);
      scheduleRetry();
    }
  }

  /** A connection for the event stream failed: the one in use goes on, and the stream is tried again later. */
  function replaceFailed(error: unknown): void {
    const reason = shortReason(errorMessage(error));
    log.warn({ event: 'mcp-event-stream-reopen-failed', err: reason }, `MCP server ${name}: connecting again to reopen its event stream failed; tried again later`);
    eventStream.reopenFailed(`connecting again to reopen its event stream failed (${reason})`);
    // Said on the new connection while it was set up: the one in use lists the tools.
    if (toolsChangedWhileConnecting) {
      toolsChangedWhileConnecting = false;
      refresh();
    }
  }

  /** The event stream kept is that of the connection being set up, if any (the one in use lost its own), or else of the one in use. */
  function watchesEventStream(connection: Connection): boolean {
    return pending ? connection === pending : inUse(connection);
  }

  function eventStreamOpened(connection: Connection): void {
    if (watchesEventStream(connection) && !closed) eventStream.opened();
  }

  function eventStreamLost(connection: Connection, loss: EventStreamLoss): void {
    if (!watchesEventStream(connection) || closed || state === 'unavailable') return;
    const reason = shortReason(loss.reason);
    log.info({ event: 'mcp-event-stream-lost', reason }, `MCP server ${name}: ${reason}; it is connected again to hear its tool changes`);
    eventStream.lost({ ...loss, reason });
  }

  /** Connects again for a new event stream, after the connect or reconnect under way (its stream may be the one lost). */
  function reconnectForEventStream(): void {
    if (closed || eventStream.isOpen()) return;
    const underWay = connecting ?? replacing;
    if (underWay) return void underWay.finally(() => reconnectForEventStream());
    if (state !== 'connected') return;
    replacing = attempt(true).finally(() => {
      replacing = undefined;
    });
  }

  /** The connection broke after it worked (process exit, an answer stream cut, or a transport error during a call). */
  function lost(reason: string): void {
    if (closed || state !== 'connected') return;
    eventStream.stop();
    const lasted = connectedAt === undefined ? 0 : now() - connectedAt;
    failures = lasted >= retry.stableAfterMs ? 1 : failures + 1;
    state = 'unavailable';
    lastError = shortReason(reason);
    const dead = client;
    client = undefined;
    // A reconnect alongside under way is dropped: the reconnect scheduled lists the tools anew.
    pending = undefined;
    // The reconnect lists the tools anew.
    clearTimeout(listRetryTimer);
    void dead?.close().catch(() => {});
    report(`MCP server ${name} stopped: ${lastError}. Reconnecting in the background; its tools fail until then.`);
    scheduleRetry();
  }

  /**
   * A notification from the server, over stdio or HTTP, on the connection in use, the one being set up, or
   * one replaced that is still finishing its calls: the same server, its change said on a call's answer
   * stream, after the connection in use read its list (heard on none, the old definitions would keep running).
   * One from a connection dropped or closed is ignored.
   */
  function notified(connection: Connection, method: string): void {
    if (method !== 'notifications/tools/list_changed') return;
    const retired = connection.client !== undefined && retiring.isRetiring(connection.client);
    if (connection === pending || inUse(connection) || retired) toolsChanged();
  }

  function toolsChanged(): void {
    if (state === 'connecting') toolsChangedWhileConnecting = true;
    else if (replacing && pending) {
      // Said on the connection being set up: its list, asked before, may be older than the change. Read once it is up.
      // Only while that replacement is still the pending one: one dropped (the connection in use was lost,
      // and connected again since) ends without applying anything, so the connection in use lists here.
      toolsChangedWhileConnecting = true;
      listPending = true;
    } else refresh();
  }

  /** Lists the tools again, after the one under way (if any) on this connection: at most one asked and one waiting. */
  function refresh(): void {
    const current = client;
    if (!current || state !== 'connected') return;
    listPending = true;
    if (listing?.client === current) {
      listing.again = true;
      return;
    }
    const run = { client: current, again: false };
    listing = run;
    void readList(run).finally(() => {
      // A list of a connection since replaced is not waited for: the new one has its own.
      if (listing !== run) return;
      listing = undefined;
      if (run.again) refresh();
    });
  }

  async function readList(run: { client: MCPClient; again: boolean }): Promise<void> {
    const current = run.client;
    listAsked += 1;
    const asked = listAsked;
    try {
      const listed = await listAllTools(current, wholeMilliseconds(config.connectTimeoutSeconds, 's'));
      // The connection was lost (or replaced) meanwhile: the new one lists its own tools.
      if (current !== client) return;
      // A list asked later was applied already; the answer to the latest one lands after it.
      if (asked <= listApplied) {
        log.debug({ event: 'mcp-tools-list-superseded' }, `MCP server ${name}: an older tools/list answer arrived after a newer one; dropped`);
        return;
      }
      listApplied = asked;
      // A list applied while a newer one is under way or waiting leaves the refusal on: the newer one settles it.
      if (asked === listAsked && !run.again) listRead();
      applyToolList(listed);
      log.info({ event: 'mcp-tools-refreshed', tools: definitions.map((definition) => definition.name) }, `MCP server ${name} changed its tools`);
      settleProblem();
    } catch (error) {
      const reason = shortReason(errorMessage(error));
      // The connection was replaced (the new one lists its own tools), or a list asked later (or waiting) decides.
      if (current !== client || asked !== listAsked || run.again) {
        log.debug({ event: 'mcp-tools-refresh-superseded', err: reason }, `MCP server ${name}: a tools/list failed with a newer one asked or waiting; ignored`);
        return;
      }
      // A dead connection is not listed again: it is reconnected, which lists the tools.
      if (isConnectionFailure(error)) return lost(`its tool list could not be read (${reason})`);
      listFailures += 1;
      staleList = reason;
      const delay = backoff(listFailures, Math.min(retry.maxDelayMs, MAX_LIST_RETRY_DELAY_MS));
      log.error(
        { event: 'mcp-tools-refresh-failed', err: reason, retryInMs: delay },
        `${staleMessage(reason)}; its tools are refused until it is. Listing again in ${Math.ceil(delay / 1000)} s.`,
      );
      clearTimeout(listRetryTimer);
      listRetryTimer = setTimeout(() => {
        listRetryTimer = undefined;
        refresh();
      }, delay);
      listRetryTimer.unref();
    }
  }

  /** The server's latest tools/list was read: a failed or pending one's refusal and retry are over. */
  function listRead(): void {
    listPending = false;
    staleList = undefined;
    listFailures = 0;
    clearTimeout(listRetryTimer);
    listRetryTimer = undefined;
  }

  function staleMessage(reason: string): string {
    return `MCP server ${name} changed its tools and its new tool list could not be read (${reason})`;
  }

  /**
   * Offers the listed tools that `include` and `exclude` let through, unless a plain `exclude` name
   * (no `*` or `?`) matches none of them: then none (fail closed). A misspelled `exclude: [delete_databse]`
   * would otherwise offer `delete_database`, the very tool the operator meant to hide, and nothing
   * would say so. An unmatched `exclude` glob only warns: `delete_*` on a server with no delete tool
   * yet is written on purpose, and hiding the whole server for it would teach operators not to use
   * exclude; the glob still hides a matching tool the server lists later.
   */
  function applyToolList(listed: ListToolsResult['tools']): void {
    mismatch = filter.unmatched(listed.map((tool) => tool.name));
    if (mismatch.include.length > 0 || mismatch.exclude.length > 0 || mismatch.excludeGlobs.length > 0) {
      // The server's names, so the operator can correct the globs; its text, so redacted and cut.
      const names = listed.slice(0, 200).map((tool) => redact(tool.name).slice(0, 200));
      if (mismatch.include.length > 0) log.warn({ event: 'mcp-include-matches-no-tool', include: mismatch.include, listed: names }, includeMessage(mismatch.include));
      if (mismatch.excludeGlobs.length > 0) {
        log.warn({ event: 'mcp-exclude-glob-matches-no-tool', exclude: mismatch.excludeGlobs, listed: names }, excludeGlobMessage(mismatch.excludeGlobs));
      }
      if (mismatch.exclude.length > 0) {
        log.error({ event: 'mcp-exclude-matches-no-tool', exclude: mismatch.exclude, listed: names }, withheldMessage(mismatch.exclude));
        definitions = [];
        options.onToolsChanged();
        return;
      }
    }
    const previous = new Map(definitions.map((definition) => [definition.metadata.tool, definition]));
    const next: McpToolDefinition[] = [];
    for (const tool of listed) {
      if (!MCP_TOOL_NAME.test(tool.name)) {
        log.warn({ event: 'mcp-tool-skipped', tool: redact(tool.name).slice(0, 200) }, `MCP server ${name} offers a tool whose name cannot be used in policy rules; skipped`);
        continue;
      }
      if (!filter.offers(tool.name)) continue;
      const old = previous.get(tool.name);
      // Unchanged tools keep their definition, so anything holding one stays valid.
      const signature = toolSignature(tool);
      if (old && listedAs.get(old) === signature) next.push(old);
      else {
        const definition = toDefinition(redactListedTool(tool, redact));
        listedAs.set(definition, signature);
        next.push(definition);
      }
    }
    definitions = next;
    options.onToolsChanged();
  }

  function toDefinition(tool: ListToolsResult['tools'][number]): McpToolDefinition {
    const schema = { ...(tool.inputSchema as JSONSchema7), properties: (tool.inputSchema.properties ?? {}) as JSONSchema7['properties'], additionalProperties: false } as JSONSchema7;
    const annotations = tool.annotations as McpToolAnnotations | undefined;
    const title = tool.title ?? annotations?.title;
    const metadata: McpToolMetadata = { source: 'mcp', server: name, tool: tool.name, ...(title ? { title } : {}), ...(annotations ? { annotations } : {}) };
    const trusted = config.trustReadOnlyHint && annotations?.readOnlyHint === true && annotations.destructiveHint !== true;
    const toolName = `${name}.${tool.name}`;
    const declared = fingerprintOf({ kind: 'mcp', server: serverIdentity(name, config), tool: tool.name });
    const definition: McpToolDefinition = {
      name: toolName,
      description: tool.description?.trim() || title || tool.name,
      // The server's JSON Schema; the AI SDK does not validate it, so ajv does (for the model's
      // input here, and for an approver's edit in the form).
      inputSchema: jsonSchema<Record<string, unknown>>(schema, {
        validate: (value) => {
          const result = validator.validate(schema, value);
          return result.success
            ? { success: true, value: value as Record<string, unknown> }
            : { success: false, error: new Error(result.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')) };
        },
      }),
      // The schema is part of every tool's fingerprint (definitionFingerprintOf); this names whom the call goes to.
      definitionFingerprint: declared,
      // No rule of its own: it needs approval unless a policy rule says otherwise, or the operator
      // chose to trust this server's readOnlyHint.
      ...(trusted ? { approval: 'never' as const } : {}),
      metadata,
      async execute(input, context) {
        const current = client;
        // These refusals (and the input's check below) come after the turn wrote the call's start marker, and
        // nothing reached the server: a `ToolNotStartedError` has the turn record the call as not run, not as run and failed.
        if (state !== 'connected' || !current) {
          const message = `MCP server ${name} is not available${lastError ? ` (${lastError})` : ''}; ${toolName} did not run. The bot reconnects in the background.`;
          throw new ToolNotStartedError({ toolName, reason: 'server-unavailable', message });
        }
        // A turn holds the definitions it was handed at its start: one the server no longer offers
        // (its tools withheld for the exclude, the tool gone from its list or redefined under its
        // name, or its latest list not read, so it may have changed) must not run, and a call the
        // policy, a grant or auto-approve let through without a card would (a grant is bound to the
        // held definition, and the input was checked against its schema).
        const unavailable = notOffered(definition);
        if (unavailable) throw new ToolNotStartedError({ toolName, reason: unavailable.reason, message: `${unavailable.text}; ${toolName} did not run.` });
        const checked = validator.validate(schema, input);
        if (!checked.success) {
          const message = `Invalid input for ${toolName}: ${checked.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')}`;
          throw new ToolNotStartedError({ toolName, reason: 'invalid-input', message });
        }
        let result: unknown;
        try {
          result = await retiring.calling(current, () =>
            current.callTool({
              name: tool.name,
              arguments: input,
              options: { timeout: wholeMilliseconds(config.timeoutSeconds, 's'), ...(context.abortSignal ? { signal: context.abortSignal } : {}) },
            }),
          );
        } catch (error) {
          const message = redact(errorMessage(error));
          if (isConnectionFailure(error) && current === client) lost(message);
          throw new Error(`${toolName} failed: ${message}`);
        }
        // Redacted inside, before the output limit cuts it (see formatMcpResult).
        const outcome = formatMcpResult(result, config.outputLimit, redact);
        if (outcome.isError) throw new Error(`${toolName} reported an error: ${outcome.output.text || 'no details'}`);
        return outcome.output;
      },
    };
    // What `definitionFingerprintOf` gives for it: `schema` is the JSON Schema its inputSchema wraps as is.
    fingerprints.set(definition, fingerprintOfParts({ declared, inputSchema: schema }));
    return definition;
  }

  return {
    name,
    start: () => connect(),
    tools: () => definitions,
    status: () => ({
      server: name,
      state,
      tools: definitions.map((definition) => definition.name),
      ...(lastError === undefined ? {} : { error: lastError }),
      ...(nextRetryAt === undefined ? {} : { nextRetryAt }),
      ...(state === 'connected' && stdio?.pid !== undefined ? { pid: stdio.pid } : {}),
      ...(warnings().length > 0 ? { warnings: warnings() } : {}),
    }),
    async close() {
      closed = true;
      state = 'closed';
      clearTimeout(retryTimer);
      clearTimeout(listRetryTimer);
      eventStream.stop();
      pending = undefined;
      await connecting?.catch(() => {});
      await replacing?.catch(() => {});
      const current = client;
      client = undefined;
      await current?.close().catch(() => {});
      await retiring.closeAll();
      await stdio?.close().catch(() => {});
    },
  };

  /**
   * Why the server does not offer the tool of the definition `held` now (or cannot say whether it
   * does: its latest list failed), or offers it as something else, if so. A definition listed again
   * with only its description changed does the same: it runs, as an approval bound to it would.
   */
  function notOffered(held: McpToolDefinition): { reason: ToolNotStartedReason; text: string } | undefined {
    if (staleList !== undefined) return { reason: 'list-stale', text: staleMessage(staleList) };
    if (listPending) return { reason: 'list-stale', text: `MCP server ${name} said its tools changed and its new tool list is not read yet` };
    if (mismatch.exclude.length > 0) return { reason: 'withheld', text: `MCP server ${name}'s tools are withheld: ${withheldMessage(mismatch.exclude)}` };
    const offered = definitions.find((definition) => definition.metadata.tool === held.metadata.tool);
    if (!offered) return { reason: 'not-offered', text: `MCP server ${name} no longer offers ${held.name}` };
    if (offered !== held && fingerprints.get(offered) !== fingerprints.get(held)) {
      return { reason: 'not-offered', text: `MCP server ${name} changed ${held.name} since this turn began (its input schema is not the one this call was made for)` };
    }
    // Annotations are not part of the fingerprint (grants and approvals bound to it stay valid when only
    // they change), but with trustReadOnlyHint they decide whether a call needs approval: a held
    // definition let through without a card must not run once the server no longer says it is read-only
    // (destructive now). The other way round is harmless: that call was approved on a card.
    if (held.approval === 'never' && offered.approval !== 'never') {
      return { reason: 'not-offered', text: `MCP server ${name} no longer declares ${held.name} read-only (it needs approval now, and this call had none)` };
    }
    return undefined;
  }

  function warnings(): McpServerWarning[] {
    return [
      ...(staleList === undefined ? [] : [{ code: 'mcp-tools-list-stale' as const, message: `${staleMessage(staleList)}; its tools are refused until it is (listed again in the background).` }]),
      ...(mismatch.exclude.length > 0 ? [{ code: 'mcp-exclude-matches-no-tool' as const, message: withheldMessage(mismatch.exclude) }] : []),
      ...(mismatch.excludeGlobs.length > 0 ? [{ code: 'mcp-exclude-glob-matches-no-tool' as const, message: excludeGlobMessage(mismatch.excludeGlobs) }] : []),
      ...(mismatch.include.length > 0 ? [{ code: 'mcp-include-matches-no-tool' as const, message: includeMessage(mismatch.include) }] : []),
      ...(state === 'connected' && eventStream.warning() !== undefined
        ? [{ code: 'mcp-event-stream-lost' as const, message: `MCP server ${name}: ${eventStream.warning()}, so a change of its tools may go unheard until it is open again (connecting again in the background).` }]
        : []),
    ];
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

/** One connection attempt and, once it made its client, that client: what tells apart whose report a transport's is. */
interface Connection {
  client?: MCPClient;
}

/** `a, b`: "a, which matches none" or "a, b, which match none" (the config's globs, not the server's text). */
function globsMatchingNone(globs: readonly string[]): string {
  return `${globs.join(', ')}, which ${globs.length === 1 ? 'matches' : 'match'} none`;
}

async function listAllTools(client: MCPClient, timeoutMs: number): Promise<ListToolsResult['tools']> {
  let page = await client.listTools({ options: { timeout: timeoutMs } });
  const tools = [...page.tools];
  for (let pages = 1; page.nextCursor != null && pages < 100; pages += 1) {
    page = await client.listTools({ params: { cursor: page.nextCursor }, options: { timeout: timeoutMs } });
    tools.push(...page.tools);
  }
  return tools;
}

/**
 * Which server a call reaches and how, as the config writes it: the env and header templates with
 * their `${VAR}` placeholders unresolved (as http_request's header templates), so a deploy that
 * turns `KUBE_CONTEXT: staging` into `prod` is another tool, while a rotated secret read into a
 * placeholder is not, and no secret value goes into the hash.
 */
function serverIdentity(name: string, config: McpServerConfig): unknown {
  if (config.transport === 'http') return { name, transport: 'http', url: config.url, headers: config.headers };
  return { name, transport: 'stdio', command: config.command, args: config.args, cwd: config.cwd ?? null, env: config.env };
}

function toolSignature(tool: ListToolsResult['tools'][number]): string {
  return JSON.stringify({ description: tool.description, title: tool.title, inputSchema: tool.inputSchema, annotations: tool.annotations });
}

/** The exit and the end of stderr, redacted before the cut so the cut cannot leave part of a secret. */
function describeExit(exit: ProcessExit, redact: Redactor): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : exit.code === null ? 'could not be started' : `exited with code ${exit.code}`;
  const tail = redact(exit.stderrTail.split('\n').slice(-3).join(' | ')).slice(-300);
  return tail ? `the process ${how}: ${tail}` : `the process ${how}`;
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}

/**
 * A failure of the connection rather than of the call: JSON-RPC errors carry a code and mean the
 * server answered; a closed connection, a refused socket or a dead session do not.
 */
function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') return false;
  if (error.name === 'AbortError' || /timed out|timeout/i.test(error.message)) return false;
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  if (typeof statusCode === 'number') return statusCode === 404 || statusCode >= 500;
  return /closed|not running|not connected|fetch failed|ECONNREFUSED|ECONNRESET|socket|network/i.test(errorMessage(error));
}
