import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

const SERVER = join(import.meta.dirname, '../../../test/fixtures/mutable-mcp-server.mjs');

/** Tools a test's `db` server lists: a harmless one, a destructive one (and its later name), a listing. */
export const STATUS_TOOL = { name: 'status', description: 'Status', inputSchema: { type: 'object', properties: {} } };
export const DELETE_DATABASE_TOOL = { name: 'delete_database', description: 'Drop a database', inputSchema: { type: 'object', properties: { name: { type: 'string' } } } };
export const DELETE_DB_TOOL = { ...DELETE_DATABASE_TOOL, name: 'delete_db' };
export const LIST_DATABASES_TOOL = { name: 'list_databases', description: 'List databases', inputSchema: { type: 'object', properties: {} } };
/** delete_database as the server defines it after the change: it also drops the backups unless told not to. */
export const DELETE_DATABASE_WITH_BACKUPS = {
  ...DELETE_DATABASE_TOOL,
  inputSchema: { type: 'object', properties: { name: { type: 'string' }, keepBackups: { type: 'boolean', default: false } } },
};

/** The context a test's tool call runs in. */
export const TOOL_CONTEXT = { toolCallId: 'c1', idempotencyKey: 'k', teamId: 'T', channel: 'C', threadTs: '1', requesterId: 'U' } as never;

/** What a tool call came to: what it answered, or the reason it was refused as not started (else its error's text). */
export const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ ran: value }),
    (error: unknown) => ({ refused: isToolNotStartedError(error) ? error.reason : String(error) }),
  );

/**
 * An MCP server `db` over stdio (test/fixtures/mutable-mcp-server.mjs) whose tools the test sets and changes
 * (`setTools`: a list, or `{ delayMs, tools }` for a slow answer), configured with `filterYaml` (its include
 * or exclude). Records what the handle reports and logs (at `logLevel` and above), and what the server was
 * asked: `asked()` tools/list requests, `listed()` the names each answer listed, `calls()` the tool calls;
 * `failLists` makes its tools/list fail.
 * The handle is pushed on `running`, for the test to close.
 */
export function startMutableMcpServer(options: { running: McpServerHandle[]; tools: object; filterYaml: string; logLevel: 'debug' | 'warn' }) {
  const { running, tools, filterYaml, logLevel } = options;
  const dir = mkdtempSync(join(tmpdir(), 'countersign-mutable-mcp-'));
  const toolsFile = join(dir, 'tools.json');
  const callsFile = join(dir, 'calls.jsonl');
  writeFileSync(toolsFile, JSON.stringify(tools));
  const yaml = `mcpServers:\n  db:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SERVER)}, ${JSON.stringify(toolsFile)}, ${JSON.stringify(callsFile)}]\n${filterYaml.replace(/^/gm, '    ')}\n`;
  const config = parseConfigFile(yaml, 'test.yml').mcpServers!.db!;
  const events = { problems: [] as Array<{ message: string; needsConfigChange?: boolean }>, recovered: [] as string[] };
  const logged: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: logLevel },
    {
      write(line: string) {
        logged.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  const handle = createMcpServer({
    name: 'db',
    config,
    env: { PATH: process.env.PATH },
    logger,
    problems: [],
    onToolsChanged: () => {},
    onProblem: (message, problem) => events.problems.push({ message, ...problem }),
    onRecovered: (message) => events.recovered.push(message),
  });
  running.push(handle);
  const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
  return {
    handle,
    events,
    logged,
    asked: () => lines(`${toolsFile}.asked`).length,
    listed: () => lines(`${toolsFile}.listed`).map((line) => JSON.parse(line) as string[]),
    calls: () => lines(callsFile),
    setTools: (next: object) => writeFileSync(toolsFile, JSON.stringify(next)),
    /** From now on tools/list is answered with a JSON-RPC error saying `error` (undefined: answered again); no notification is sent. */
    failLists: (error: string | undefined) => (error === undefined ? rmSync(`${toolsFile}.list-error`, { force: true }) : writeFileSync(`${toolsFile}.list-error`, error)),
  };
}

/**
 * `startMutableMcpServer` for the tests of the file that calls this at its top level: each server is
 * closed after its test.
 */
export function useMutableMcpServers() {
  const running: McpServerHandle[] = [];
  afterEach(async () => {
    while (running.length > 0) await running.pop()?.close();
  });
  return (options: Omit<Parameters<typeof startMutableMcpServer>[0], 'running'>) => startMutableMcpServer({ ...options, running });
}
