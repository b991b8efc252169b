import { createMCPClient, type MCPClient, type MCPTransport } from '@ai-sdk/mcp';
import type { Logger } from 'pino';
import type { McpServerConfig } from '../../config/mcp-config-schema.js';
import { wholeMilliseconds } from '../../config/duration.js';
import { commandEnvironment, withholding } from '../command/command-environment.js';
import type { ConfigSecrets } from '../config-secrets.js';
import type { ResolvedValues } from '../http/header-templates.js';
import type { Redactor } from '../http/redact.js';
import type { createEventStreamKeeper } from './event-stream-keeper.js';
import type { EventStreamLoss } from './event-stream-watch.js';
import { createMcpHttpFetch } from './mcp-http-fetch.js';
import { describeExit, errorMessage, type McpProblems } from './mcp-problems.js';
import type { CreateMcpServerOptions, McpRetryOptions, McpServerShared } from './mcp-server-types.js';
import { listAllTools, type createMcpToolList } from './mcp-tool-list.js';
import type { createRetiringClients } from './retiring-clients.js';
import { DEFAULT_DISCOVERY_TIMEOUT_MS, StdioTransport } from './stdio-transport.js';

export interface McpConnectionOptions {
  name: string;
  config: McpServerConfig;
  options: Pick<CreateMcpServerOptions, 'env' | 'maxResponseBytes' | 'processGroups'>;
  log: Logger;
  now: () => number;
  retry: McpRetryOptions;
  configSecrets: ConfigSecrets;
  /** The config's `headers` (HTTP) or `env` (stdio), their `${VAR}` placeholders filled. */
  headers: ResolvedValues | undefined;
  env: ResolvedValues | undefined;
  redact: Redactor;
  /** Its state, client, transport and last error are set here, for the definitions, the list and the status. */
  shared: McpServerShared;
  problems: Pick<McpProblems, 'report' | 'settleProblem' | 'shortReason' | 'describeFailure'>;
  lists: Pick<ReturnType<typeof createMcpToolList>, 'numberList' | 'connected' | 'refresh' | 'stopRetry'>;
  eventStream: ReturnType<typeof createEventStreamKeeper>;
  retiring: Pick<ReturnType<typeof createRetiringClients<MCPClient>>, 'retire' | 'isRetiring' | 'closeAll'>;
  /** How long to wait before connecting again (`createMcpServer`'s backoff). */
  backoff: (failed: number, maxDelayMs: number) => number;
}

/**
 * The connection to one MCP server: connects (over stdio or HTTP), connects again with backoff when
 * it fails or is lost, and alongside the connection in use when its event stream is lost for good;
 * tells the tool list when the server says its tools changed.
 */
export function createMcpConnection(connectionOptions: McpConnectionOptions) {
  const { name, config, options, log, now, retry, configSecrets, headers, env, redact, shared, problems, lists, eventStream, retiring, backoff } = connectionOptions;
  const { report, settleProblem, shortReason, describeFailure } = problems;
  const { refresh } = lists;
  /**
   * The connection the latest attempt is setting up, until it is up or failed: one overtaken by a later
   * attempt, a loss or the close is dropped when it ends. What a transport reports is told apart by
   * its own connection (see `inUse`), never by which attempt is the latest: a reconnect alongside that
   * fails leaves the connection in use as heard as before.
   */
  let pending: Connection | undefined;
  let failures = 0;
  let connectedAt: number | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let connecting: Promise<void> | undefined;
  /**
   * The server said its tools changed before the connection was up: with the answer to the first
   * tools/list, say, when it announces tools it was still loading. Read again once connected.
   */
  let toolsChangedWhileConnecting = false;
  /** The connect alongside the connection in use for a new event stream (`reconnectForEventStream`), while under way. */
  let replacing: Promise<void> | undefined;

  return { connect, lost, reconnectForEventStream, close };

  function scheduleRetry(): void {
    if (closed) return;
    const delay = backoff(failures, retry.maxDelayMs);
    shared.nextRetryAt = now() + delay;
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      shared.nextRetryAt = undefined;
      void connect();
    }, delay);
    retryTimer.unref();
  }

  /** Whether `connection` is the one serving calls now (a connection replaced or being set up is not). */
  function inUse(connection: Connection): boolean {
    return connection.client !== undefined && connection.client === shared.client;
  }

  function createTransport(connection: Connection): MCPTransport | { type: 'http'; url: string; headers: Record<string, string>; redirect: 'error'; fetch: typeof fetch } {
    if (config.transport === 'http') {
      // An answer stream that breaks fails the request that waits on it, and only it ("Connection closed":
      // watchAnswerStreams answers it so), as a stdio server's exit does; nothing is sent again, since the
      // call may have run.
      const fetch = createMcpHttpFetch({
        maxResponseBytes: options.maxResponseBytes,
        onBroken: (error) => {
          // The connection is taken as lost, but not closed: each request has its own answer stream, and
          // the other calls sent on it may be carried out and answered on theirs (closing the client would
          // record them as run and failed, and the model may send them again). Retired as lost, it is closed
          // once they ended; a call that read its list on it and has not sent its tools/call yet does not
          // send it (refused as not run). The connection in use is replaced; one replaced before (a call
          // still under way on it) or being set up just ends, and the connection in use goes on.
          if (inUse(connection)) lost(`the connection broke while it was answering (${errorMessage(error)})`);
          else if (connection.client) retiring.retire(connection.client, { broken: true });
        },
        onNotification: (method) => notified(connection, method),
        onEventStreamOpened: (reopened) => eventStreamOpened(connection, reopened),
        onEventStreamLost: (loss) => eventStreamLost(connection, loss),
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
    shared.stdio = transport;
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
    if (!replace) shared.state = 'connecting';
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
      connection.listAsked = true;
      // Numbered when asked: a call on the connection in use may read a newer list before this one is answered.
      let asked = lists.numberList();
      let listed = await listAllTools(newClient, timeoutMs);
      // Its event stream opened only after the list was asked (the client opens it on its own schedule,
      // alongside): a change the server made after it answered and before the stream opened was said to
      // no one. Listed again, the stream open now, before the connection is used: one more tools/list.
      if (connection.listAgain && !closed && pending === connection) {
        asked = lists.numberList();
        listed = await listAllTools(newClient, timeoutMs);
      }
      if (closed || pending !== connection) {
        await newClient.close().catch(() => {});
        return;
      }
      pending = undefined;
      const replaced = shared.client;
      shared.client = newClient;
      if (replaced) retiring.retire(replaced);
      if (transport instanceof StdioTransport) transport.clearStderr();
      shared.state = 'connected';
      connectedAt = now();
      shared.lastError = undefined;
      lists.connected({ listed, asked });
      log.info({ event: 'mcp-server-connected', tools: shared.definitions.map((definition) => definition.name) }, `MCP server ${name} connected`);
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
      shared.state = 'unavailable';
      shared.lastError = shortReason(describeFailure(error, transport));
      report(`MCP server ${name} could not be started: ${shared.lastError}. Retrying in the background; its tools are unavailable until then.`);
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

  /**
   * A stream opened again after a loss (the client reopens a broken one itself), or a connection's first
   * stream opened after its tools/list was asked: a tools/list_changed said while it was not open reached
   * no one (a server without an event store does not say it again), so the list read may be out of date.
   * On the connection in use this counts as a tools/list_changed (its tools refused until listed again);
   * on one still being set up whose first stream it is, the connect lists again before the connection is used.
   */
  function eventStreamOpened(connection: Connection, reopened: boolean): void {
    if (watchesEventStream(connection) && !closed) eventStream.opened();
    const first = !connection.streamOpened;
    connection.streamOpened = true;
    const listMayPredate = first && connection.listAsked === true;
    if (listMayPredate && connection === pending && !reopened) connection.listAgain = true;
    else if (reopened || listMayPredate) notified(connection, 'notifications/tools/list_changed');
  }

  function eventStreamLost(connection: Connection, loss: EventStreamLoss): void {
    if (!watchesEventStream(connection) || closed || shared.state === 'unavailable') return;
    const reason = shortReason(loss.reason);
    log.info({ event: 'mcp-event-stream-lost', reason }, `MCP server ${name}: ${reason}; it is connected again to hear its tool changes`);
    eventStream.lost({ ...loss, reason });
  }

  /** Connects again for a new event stream, after the connect or reconnect under way (its stream may be the one lost). */
  function reconnectForEventStream(): void {
    if (closed || eventStream.isOpen()) return;
    const underWay = connecting ?? replacing;
    if (underWay) return void underWay.finally(() => reconnectForEventStream());
    if (shared.state !== 'connected') return;
    replacing = attempt(true).finally(() => {
      replacing = undefined;
    });
  }

  /** The connection broke after it worked (process exit, an answer stream cut, or a transport error during a call). */
  function lost(reason: string): void {
    if (closed || shared.state !== 'connected') return;
    eventStream.stop();
    const lasted = connectedAt === undefined ? 0 : now() - connectedAt;
    failures = lasted >= retry.stableAfterMs ? 1 : failures + 1;
    shared.state = 'unavailable';
    shared.lastError = shortReason(reason);
    const dead = shared.client;
    shared.client = undefined;
    // A reconnect alongside under way is dropped: the reconnect scheduled lists the tools anew.
    pending = undefined;
    // The reconnect lists the tools anew.
    lists.stopRetry();
    // Retired, not closed at once: closing it would fail the calls already sent on it, which the server
    // may be carrying out (one call's tools/list meeting a 503 while a backend drains says nothing of
    // them), and a call recorded as failed though it ran may be sent again. On a connection truly gone
    // they fail on their own (their answer stream breaks, or they time out); it is closed once they end.
    // A call under way on it that has not sent its tools/call yet does not send it (it is refused as not run).
    // Over stdio it is closed at once, as before: the process is the connection (its calls cannot be
    // answered over another), and closing the client is what stops it; left running, it would work on
    // beside the one the reconnect starts (two servers at once) until its calls ended or timed out.
    if (dead && config.transport === 'stdio') void dead.close().catch(() => {});
    else if (dead) retiring.retire(dead, { broken: true });
    report(`MCP server ${name} stopped: ${shared.lastError}. Reconnecting in the background; its tools fail until then.`);
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
    if (shared.state === 'connecting') toolsChangedWhileConnecting = true;
    else if (replacing && pending) {
      // Said on the connection being set up: its list, asked before, may be older than the change. Read once it is up.
      // Only while that replacement is still the pending one: one dropped (the connection in use was lost,
      // and connected again since) ends without applying anything, so the connection in use lists here.
      toolsChangedWhileConnecting = true;
      shared.listPending = true;
    } else refresh();
  }

  /** For good: an attempt under way is dropped and none follows; the clients, those retiring included, and the process are closed. */
  async function close(): Promise<void> {
    closed = true;
    shared.state = 'closed';
    clearTimeout(retryTimer);
    lists.stopRetry();
    eventStream.stop();
    pending = undefined;
    await connecting?.catch(() => {});
    await replacing?.catch(() => {});
    const current = shared.client;
    shared.client = undefined;
    await current?.close().catch(() => {});
    await retiring.closeAll();
    await shared.stdio?.close().catch(() => {});
  }
}

/** One connection attempt and, once it made its client, that client: what tells apart whose report a transport's is. */
interface Connection {
  client?: MCPClient;
  /** Its tools/list was asked: a first event stream opening after that may have missed a change said before it. */
  listAsked?: boolean;
  /** Its event stream opened (a first one, or again after a loss). */
  streamOpened?: boolean;
  /** Its first event stream opened while it was being set up, after its tools/list was asked: it lists again before it is used. */
  listAgain?: boolean;
}
