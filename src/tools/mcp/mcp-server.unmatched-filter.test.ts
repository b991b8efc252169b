import { describe, expect, it } from 'vitest';
import { DELETE_DATABASE_TOOL, LIST_DATABASES_TOOL, STATUS_TOOL, useMutableMcpServers } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * `include` and `exclude` name a server's own tools, known only once it lists them. A misspelled
 * `exclude: [delete_databse]` matched nothing, so `delete_database`, the tool the operator meant
 * to hide, was offered and nothing said so. Now an `exclude` name that matches no listed tool
 * withholds all the server's tools (fail closed) and says so; an `exclude` glob (`delete_*`, often
 * written for tools the server may list later) and an `include` entry only warn.
 */

const startServer = useMutableMcpServers();

function start(tools: object[], filterYaml: string) {
  return startServer({ tools, filterYaml, logLevel: 'warn' });
}

describe('an MCP server whose exclude names no tool it lists', () => {
  it('offers none of its tools, and says so in the log, the problem notice and its status', { timeout: 20_000 }, async () => {
    const { handle, events, logged } = start([DELETE_DATABASE_TOOL, STATUS_TOOL], 'exclude: [delete_databse]');
    await handle.start();

    expect(handle.status().state).toBe('connected');
    expect(handle.tools().map((tool) => tool.name)).toEqual([]);
    const said =
      'MCP server db: its exclude lists delete_databse, which matches none of the tools it lists, so none of its tools are offered ' +
      '(a misspelled exclude would offer the tool it was meant to hide). Correct mcpServers.db.exclude.';
    expect(events.problems).toEqual([{ message: said, needsConfigChange: true }]);
    expect(handle.status().warnings).toEqual([{ code: 'mcp-exclude-matches-no-tool', message: said }]);
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 50, event: 'mcp-exclude-matches-no-tool', mcpServer: 'db', exclude: ['delete_databse'], listed: ['delete_database', 'status'], msg: said }),
    );
  });

  it('withholds them until a list bears the name out', { timeout: 20_000 }, async () => {
    const { handle, events, listed, setTools } = start([STATUS_TOOL, LIST_DATABASES_TOOL], 'exclude: [delete_database]');
    await handle.start();
    expect(handle.tools()).toEqual([]);
    expect(events.problems).toEqual([{ message: expect.stringContaining('its exclude lists delete_database, which matches none of the tools it lists'), needsConfigChange: true }]);

    // The server now lists the tool the name was written for (tools/list_changed): the others are offered.
    setTools([STATUS_TOOL, LIST_DATABASES_TOOL, DELETE_DATABASE_TOOL]);
    await until(() => listed().some((names) => names.includes('delete_database')), 'the list read again');
    await until(() => handle.tools().length > 0, 'the tools offered');
    expect(handle.tools().map((tool) => tool.name)).toEqual(['db.status', 'db.list_databases']);
    expect(handle.status().warnings).toBeUndefined();
    expect(events.recovered).toEqual(["MCP server db's exclude list matches its tools now (2 tools offered)."]);
  });

  it('withholds them for an unmatched name even beside an unmatched glob, and warns of both', { timeout: 20_000 }, async () => {
    const { handle, events } = start([DELETE_DATABASE_TOOL, STATUS_TOOL], 'exclude: [delete_databse, "drop_*"]');
    await handle.start();
    expect(handle.tools()).toEqual([]);
    expect(events.problems).toEqual([{ message: expect.stringContaining('its exclude lists delete_databse, which matches none'), needsConfigChange: true }]);
    expect(handle.status().warnings?.map((warning) => warning.code)).toEqual(['mcp-exclude-matches-no-tool', 'mcp-exclude-glob-matches-no-tool']);
  });

  it('offers what a matching exclude leaves, with no warning', { timeout: 20_000 }, async () => {
    const { handle, events } = start([DELETE_DATABASE_TOOL, STATUS_TOOL, LIST_DATABASES_TOOL], 'exclude: ["delete_*"]');
    await handle.start();
    expect(handle.tools().map((tool) => tool.name)).toEqual(['db.status', 'db.list_databases']);
    expect(events.problems).toEqual([]);
    expect(handle.status().warnings).toBeUndefined();
  });
});

describe('an MCP server whose exclude has a glob matching no tool it lists', () => {
  it('offers its tools with a warning, and the glob hides a matching tool the server lists later', { timeout: 20_000 }, async () => {
    const { handle, events, logged, listed, setTools } = start([STATUS_TOOL, LIST_DATABASES_TOOL], 'exclude: ["delete_*"]');
    await handle.start();

    expect(handle.tools().map((tool) => tool.name)).toEqual(['db.status', 'db.list_databases']);
    expect(events.problems).toEqual([]);
    const said =
      'MCP server db: its exclude lists delete_*, which matches none of the tools it lists; its tools are offered, ' +
      'and a tool it lists later that the glob matches is hidden. If it is a typo, correct mcpServers.db.exclude.';
    expect(handle.status().warnings).toEqual([{ code: 'mcp-exclude-glob-matches-no-tool', message: said }]);
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 40, event: 'mcp-exclude-glob-matches-no-tool', mcpServer: 'db', exclude: ['delete_*'], listed: ['status', 'list_databases'], msg: said }),
    );

    // The server now lists a tool the glob matches (tools/list_changed): it is hidden, the warning is over.
    setTools([STATUS_TOOL, LIST_DATABASES_TOOL, DELETE_DATABASE_TOOL]);
    await until(() => listed().some((names) => names.includes('delete_database')), 'the list read again');
    await until(() => handle.status().warnings === undefined, 'the warning cleared');
    expect(handle.tools().map((tool) => tool.name)).toEqual(['db.status', 'db.list_databases']);
    expect(events.problems).toEqual([]);
    expect(events.recovered).toEqual([]);
  });
});

describe('an MCP server whose include names a tool it does not list', () => {
  it('offers the tools the rest of include matches, with a warning in the log and its status', { timeout: 20_000 }, async () => {
    const { handle, events, logged } = start([DELETE_DATABASE_TOOL, STATUS_TOOL, LIST_DATABASES_TOOL], 'include: [stauts, "list_*"]');
    await handle.start();

    expect(handle.tools().map((tool) => tool.name)).toEqual(['db.list_databases']);
    expect(events.problems).toEqual([]);
    const said = 'MCP server db: its include lists stauts, which matches none of the tools it lists; the tools the rest of the list matches are offered. Correct mcpServers.db.include.';
    expect(handle.status().warnings).toEqual([{ code: 'mcp-include-matches-no-tool', message: said }]);
    expect(logged).toContainEqual(expect.objectContaining({ level: 40, event: 'mcp-include-matches-no-tool', mcpServer: 'db', include: ['stauts'], msg: said }));
  });
});
