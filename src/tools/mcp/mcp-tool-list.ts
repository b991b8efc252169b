import type { ListToolsResult, MCPClient } from '@ai-sdk/mcp';
import type { Logger } from 'pino';
import type { McpServerConfig } from '../../config/mcp-config-schema.js';
import { wholeMilliseconds } from '../../config/duration.js';
import type { Redactor } from '../http/redact.js';
import { createMcpListMessages } from './mcp-list-messages.js';
import { errorMessage, isConnectionFailure, type McpProblems } from './mcp-problems.js';
import { createFreshReads } from './fresh-reads.js';
import type { CreateMcpServerOptions, McpRetryOptions, McpServerShared, McpToolDefinition, OfferedTools } from './mcp-server-types.js';
import { redactListedTool } from './redact-listed-tool.js';
import type { McpToolFilter } from './tool-filter.js';

/**
 * The longest wait between two tries of a tools/list that failed on a connected server (from
 * `initialDelayMs`, doubled per failure): its tools are refused meanwhile, so sooner than a reconnect.
 */
const MAX_LIST_RETRY_DELAY_MS = 30_000;

/** Tool names a policy rule can refer to: `server.tool`, with dots allowed inside the tool name. */
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export interface McpToolListOptions {
  name: string;
  config: McpServerConfig;
  log: Logger;
  redact: Redactor;
  filter: McpToolFilter;
  /** The connection in use (`client`, `state`) is listed; what a list says is set here for the rest to read. */
  shared: Pick<McpServerShared, 'state' | 'client' | 'definitions' | 'mismatch' | 'staleList' | 'listPending'>;
  problems: Pick<McpProblems, 'settleProblem' | 'shortReason'>;
  retry: Pick<McpRetryOptions, 'maxDelayMs'>;
  /** How long to wait before a failed list is asked again (`createMcpServer`'s backoff). */
  backoff: (failed: number, maxDelayMs: number) => number;
  toDefinition: (tool: ListToolsResult['tools'][number]) => McpToolDefinition;
  /** The connection in use broke while it was listed. */
  lost: (reason: string) => void;
  options: Pick<CreateMcpServerOptions, 'onToolsChanged'>;
}

/**
 * The tools one MCP server offers, from its tools/list: read when it connects and again when it says
 * they changed (refused meanwhile), a failed read asked again with backoff, and over HTTP for each call;
 * `include` and `exclude` applied, and the definitions of unchanged tools kept.
 */
export function createMcpToolList({ name, config, log, redact, filter, shared, problems, retry, backoff, toDefinition, lost, options }: McpToolListOptions) {
  const { settleProblem, shortReason } = problems;
  const { withheldMessage, excludeGlobMessage, includeMessage, staleMessage } = createMcpListMessages(name);
  /** What the server listed for each definition, to keep unchanged tools' definitions on refresh. */
  const listedAs = new WeakMap<McpToolDefinition, string>();
  /**
   * Each tools/list asked gets the next number; `listApplied` is that of the list the definitions
   * come from. An answer older than the list applied is dropped, or it would undo what the newer
   * list called for (withhold the tools for an exclude name the server no longer lists, or offer
   * them again): a connect lists anew while a refresh of the connection before may still be answered.
   */
  let listAsked = 0;
  let listApplied = 0;
  /**
   * The number of the latest list asked at connect or for a change the server said (not for a call):
   * the one that settles the refusal that change holds (`listPending`, `staleList`). A call's list
   * asked meanwhile does not: it neither clears that refusal nor keeps it on for good.
   */
  let latestRefresh = 0;
  /**
   * The tools/list under way on a connection after the server said its tools changed, and whether
   * it said so again meanwhile (`again`: read once more after this one). A server that says it 200
   * times in a row (a loop, tools registered one by one) is listed twice, not 200 times at once with
   * each answer up to maxResponseBytes held together.
   */
  let listing: { client: MCPClient; again: boolean } | undefined;
  let listFailures = 0;
  let listRetryTimer: NodeJS.Timeout | undefined;
  /**
   * Calls about to run at once on one connection share a tools/list, never one asked before they were; each
   * waits for it until its turn stops (`offeredNow`'s signal), the list going on for the others.
   */
  const callLists = createFreshReads(listForCall);

  return { numberList, connected, refresh, stopRetry, offeredNow: callLists.ask };

  /**
   * The number of a tools/list a connect is about to ask (`createMcpConnection`), given when it is asked, not
   * when it is answered: a call on the connection in use may read (and apply) a newer list meanwhile.
   */
  function numberList(): number {
    listAsked += 1;
    return listAsked;
  }

  /**
   * A connection is up with the tools it listed (`createMcpConnection`), its list numbered `asked` (`numberList`):
   * they are the server's tools now, unless a list asked after it was applied meanwhile.
   */
  function connected({ listed, asked }: { listed: ListToolsResult['tools']; asked: number }): void {
    // What the connection before was still asking for is dropped (it is no longer the one in use), and the
    // refusal of a change said before this list was asked is settled; one said since is read anew (`createMcpConnection`).
    latestRefresh = listAsked;
    listRead();
    if (asked < listApplied) {
      // A call's list, asked on the connection before after this one was and applied already, is newer: applied,
      // this one would set the tools offered back to a definition the server no longer offers (cards, status,
      // the definitions a new turn holds). The tools offered stay; the status follows the new connection.
      log.debug({ event: 'mcp-tools-list-superseded' }, `MCP server ${name}: the tools/list of a connect was answered after a newer one was applied; dropped`);
      options.onToolsChanged();
      return;
    }
    listApplied = asked;
    applyToolList(listed);
  }

  /** The connection in use is lost or the server closed: a list asked again is not (a reconnect lists the tools anew). */
  function stopRetry(): void {
    clearTimeout(listRetryTimer);
  }

  /** Lists the tools again, after the one under way (if any) on this connection: at most one asked and one waiting. */
  function refresh(): void {
    const current = shared.client;
    if (!current || shared.state !== 'connected') return;
    shared.listPending = true;
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
    latestRefresh = asked;
    try {
      const listed = await listAllTools(current, wholeMilliseconds(config.connectTimeoutSeconds, 's'));
      if (closedMeanwhile()) return;
      // The connection was lost (or replaced) meanwhile: the new one lists its own tools.
      if (current !== shared.client) return;
      // A list asked later was applied already; the answer to the latest one lands after it.
      if (asked <= listApplied) {
        log.debug({ event: 'mcp-tools-list-superseded' }, `MCP server ${name}: an older tools/list answer arrived after a newer one; dropped`);
        return;
      }
      listApplied = asked;
      // A list applied while a newer one is under way or waiting leaves the refusal on: the newer one settles it.
      if (asked === latestRefresh && !run.again) listRead();
      applyToolList(listed);
      log.info({ event: 'mcp-tools-refreshed', tools: shared.definitions.map((definition) => definition.name) }, `MCP server ${name} changed its tools`);
      settleProblem();
    } catch (error) {
      if (closedMeanwhile()) return;
      const reason = shortReason(errorMessage(error));
      // The connection was replaced (the new one lists its own tools), or a list asked later (or waiting) decides.
      if (current !== shared.client || asked !== latestRefresh || run.again) {
        log.debug({ event: 'mcp-tools-refresh-superseded', err: reason }, `MCP server ${name}: a tools/list failed with a newer one asked or waiting; ignored`);
        return;
      }
      // A dead connection is not listed again: it is reconnected, which lists the tools.
      if (isConnectionFailure(error)) return lost(`its tool list could not be read (${reason})`);
      listFailures += 1;
      shared.staleList = reason;
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

  /**
   * The server was closed while a list was under way: close() lets go of the connection in use only
   * after a connect under way ended, so a list answered (or failed) meanwhile still finds it current.
   * Applied, it would tell onToolsChanged (onRecovered, onProblem) after the bot shut the server down,
   * or set a timer to list again.
   */
  function closedMeanwhile(): boolean {
    if (shared.state !== 'closed') return false;
    log.debug({ event: 'mcp-tools-list-after-close' }, `MCP server ${name}: a tools/list ended after the server was closed; dropped`);
    return true;
  }

  /**
   * What the server offers now, for a call about to run over `client` (HTTP; see `createMcpToolDefinitions`):
   * from a tools/list asked after the call was, or a newer list already applied. Heard changes are not
   * enough to hold a call to the definition it was made for: a stateless server has no event stream, a
   * lost one is replaced only after a while, one a middlebox silenced says nothing. Rejects when the list
   * cannot be read (the call is refused, never run on the list from before). A change it shows is applied
   * too (the tools offered, cards and status follow), unless a change the server said is being read (that
   * list settles it, with the refusals it holds meanwhile) or the connection was replaced.
   */
  async function listForCall(client: MCPClient): Promise<OfferedTools> {
    listAsked += 1;
    const asked = listAsked;
    const listed = await listAllTools(client, wholeMilliseconds(config.connectTimeoutSeconds, 's'));
    const offered = offeredBy(listed);
    if (client !== shared.client || shared.state !== 'connected') return offered;
    // A list asked after this one was applied meanwhile (for a change said, or for another call): it is newer.
    if (asked < listApplied) return { definitions: shared.definitions, mismatch: shared.mismatch };
    if (shared.listPending || shared.staleList !== undefined) return offered;
    listApplied = asked;
    if (!sameOffer(offered, shared)) {
      applyOffered(listed, offered);
      log.info({ event: 'mcp-tools-refreshed', tools: shared.definitions.map((definition) => definition.name) }, `MCP server ${name} changed its tools (seen in the tool list read for a call)`);
      settleProblem();
    }
    return offered;
  }

  /** The server's latest tools/list was read: a failed or pending one's refusal and retry are over. */
  function listRead(): void {
    shared.listPending = false;
    shared.staleList = undefined;
    listFailures = 0;
    clearTimeout(listRetryTimer);
    listRetryTimer = undefined;
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
    applyOffered(listed, offeredBy(listed));
  }

  function applyOffered(listed: ListToolsResult['tools'], offered: OfferedTools & { skipped: string[] }): void {
    shared.mismatch = offered.mismatch;
    if (shared.mismatch.include.length > 0 || shared.mismatch.exclude.length > 0 || shared.mismatch.excludeGlobs.length > 0) {
      // The server's names, so the operator can correct the globs; its text, so redacted and cut.
      const names = listed.slice(0, 200).map((tool) => redact(tool.name).slice(0, 200));
      if (shared.mismatch.include.length > 0) log.warn({ event: 'mcp-include-matches-no-tool', include: shared.mismatch.include, listed: names }, includeMessage(shared.mismatch.include));
      if (shared.mismatch.excludeGlobs.length > 0) {
        log.warn({ event: 'mcp-exclude-glob-matches-no-tool', exclude: shared.mismatch.excludeGlobs, listed: names }, excludeGlobMessage(shared.mismatch.excludeGlobs));
      }
      if (shared.mismatch.exclude.length > 0) log.error({ event: 'mcp-exclude-matches-no-tool', exclude: shared.mismatch.exclude, listed: names }, withheldMessage(shared.mismatch.exclude));
    }
    for (const skipped of offered.skipped) {
      log.warn({ event: 'mcp-tool-skipped', tool: redact(skipped).slice(0, 200) }, `MCP server ${name} offers a tool whose name cannot be used in policy rules; skipped`);
    }
    shared.definitions = offered.definitions;
    options.onToolsChanged();
  }

  /** What the listed tools make offered (see `applyToolList`), unapplied; the tools skipped for their names. */
  function offeredBy(listed: ListToolsResult['tools']): OfferedTools & { skipped: string[] } {
    const mismatch = filter.unmatched(listed.map((tool) => tool.name));
    if (mismatch.exclude.length > 0) return { mismatch, definitions: [], skipped: [] };
    const previous = new Map(shared.definitions.map((definition) => [definition.metadata.tool, definition]));
    const definitions: McpToolDefinition[] = [];
    const skipped: string[] = [];
    for (const tool of listed) {
      if (!MCP_TOOL_NAME.test(tool.name)) {
        skipped.push(tool.name);
        continue;
      }
      if (!filter.offers(tool.name)) continue;
      const old = previous.get(tool.name);
      // Unchanged tools keep their definition, so anything holding one stays valid.
      const signature = toolSignature(tool);
      if (old && listedAs.get(old) === signature) definitions.push(old);
      else {
        const definition = toDefinition(redactListedTool(tool, redact));
        listedAs.set(definition, signature);
        definitions.push(definition);
      }
    }
    return { mismatch, definitions, skipped };
  }
}

export async function listAllTools(client: MCPClient, timeoutMs: number): Promise<ListToolsResult['tools']> {
  let page = await client.listTools({ options: { timeout: timeoutMs } });
  const tools = [...page.tools];
  for (let pages = 1; page.nextCursor != null && pages < 100; pages += 1) {
    page = await client.listTools({ params: { cursor: page.nextCursor }, options: { timeout: timeoutMs } });
    tools.push(...page.tools);
  }
  return tools;
}

/** The same definitions (unchanged tools keep theirs) and the same filter entries unborne: nothing to apply. */
function sameOffer(a: OfferedTools, b: OfferedTools): boolean {
  return a.definitions.length === b.definitions.length && a.definitions.every((definition, index) => definition === b.definitions[index]) && JSON.stringify(a.mismatch) === JSON.stringify(b.mismatch);
}

function toolSignature(tool: ListToolsResult['tools'][number]): string {
  return JSON.stringify({ description: tool.description, title: tool.title, inputSchema: tool.inputSchema, annotations: tool.annotations });
}
