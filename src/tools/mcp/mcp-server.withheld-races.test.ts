import { describe, expect, it } from 'vitest';
import { DELETE_DATABASE_TOOL, DELETE_DB_TOOL, STATUS_TOOL, useMutableMcpServers } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * Withholding a server's tools (an `exclude` name matching none of the tools it lists) must hold
 * while the server changes its list: an older tools/list answer arriving after a newer one must not
 * undo it.
 */

const startServer = useMutableMcpServers();

function start(tools: object, filterYaml: string) {
  const server = startServer({ tools, filterYaml, logLevel: 'debug' });
  return {
    ...server,
    /** tools/list answers read after the connection's first: applied, or dropped as older than the list applied. */
    answersRead: () => server.logged.filter((line) => line.event === 'mcp-tools-refreshed' || line.event === 'mcp-tools-list-superseded').length,
  };
}

describe('an MCP server whose tools/list answers arrive out of order', () => {
  it('a tools/list answer that was asked before the latest one does not undo the withholding the latest list calls for', { timeout: 30_000 }, async () => {
    const { handle, events, answersRead, asked, setTools } = start([STATUS_TOOL, DELETE_DATABASE_TOOL], 'exclude: [delete_database]');
    await handle.start();
    expect(handle.tools().map((tool) => tool.name)).toEqual(['db.status']);

    // list_changed #1: the server's list handler is slow this time (it awaits its backend).
    const askedBefore = asked();
    setTools({ delayMs: 1500, tools: [STATUS_TOOL, DELETE_DATABASE_TOOL] });
    await until(() => asked() > askedBefore, 'the first refresh asked');
    // The server renames delete_database (list_changed #2, answered at once): the exclude now matches none -> withheld.
    setTools([STATUS_TOOL, DELETE_DB_TOOL]);
    await until(() => handle.tools().length === 0, 'the tools withheld by the latest list');
    expect(events.problems.map((problem) => problem.message)).toEqual([expect.stringContaining('its exclude lists delete_database, which matches none')]);
    // The slow answer to the first refresh, read before the rename, arrives now.
    await until(() => answersRead() === 2, 'the slow answer read');

    // The server lists [status, delete_db] now: its exclude matches none of them, so nothing may be offered.
    expect(handle.tools().map((tool) => tool.name)).toEqual([]);
    expect(handle.status().warnings?.map((warning) => warning.code)).toEqual(['mcp-exclude-matches-no-tool']);
    expect(events.recovered).toEqual([]);
  });

  it('nor does one keep withholding the tools of a server whose latest list bears the exclude out', { timeout: 30_000 }, async () => {
    const { handle, events, answersRead, asked, setTools } = start([STATUS_TOOL, DELETE_DB_TOOL], 'exclude: [delete_database]');
    await handle.start();
    expect(handle.tools()).toEqual([]);

    // list_changed #1, answered slowly with the list as it is now; #2 answered at once, after the server renamed the tool back.
    const askedBefore = asked();
    setTools({ delayMs: 1500, tools: [STATUS_TOOL, DELETE_DB_TOOL] });
    await until(() => asked() > askedBefore, 'the first refresh asked');
    setTools([STATUS_TOOL, DELETE_DATABASE_TOOL]);
    await until(() => handle.tools().length > 0, 'the tools offered by the latest list');
    await until(() => answersRead() === 2, 'the slow answer read');

    expect(handle.tools().map((tool) => tool.name)).toEqual(['db.status']);
    expect(handle.status().warnings).toBeUndefined();
    expect(events.recovered).toEqual(["MCP server db's exclude list matches its tools now (1 tools offered)."]);
  });
});

describe('a definition handed out before its server stopped offering the tool', () => {
  const context = { toolCallId: 'c1', idempotencyKey: 'k', teamId: 'T', channel: 'C', threadTs: '1', requesterId: 'U' } as never;

  it('does not run while the server is withheld (a turn built its tool set before the list changed), and runs once it is offered again', { timeout: 30_000 }, async () => {
    const { handle, calls, setTools } = start([STATUS_TOOL, DELETE_DATABASE_TOOL], 'exclude: [delete_database]');
    await handle.start();
    const status = handle.tools().find((tool) => tool.name === 'db.status')!;
    expect(status).toBeDefined();
    setTools([STATUS_TOOL, DELETE_DB_TOOL]);
    await until(() => handle.tools().length === 0, 'the tools withheld');

    await expect(status.execute!({}, context)).rejects.toThrow(
      "MCP server db's tools are withheld: MCP server db: its exclude lists delete_database, which matches none of the tools it lists",
    );
    await expect(status.execute!({}, context)).rejects.toThrow(/; db\.status did not run\.$/);
    expect(calls()).toEqual([]);

    setTools([STATUS_TOOL, DELETE_DATABASE_TOOL]);
    await until(() => handle.tools().length > 0, 'the tools offered again');
    await expect(status.execute!({}, context)).resolves.toEqual(expect.objectContaining({ text: 'ran status with {}' }));
  });

  it('does not run once the server no longer lists the tool', { timeout: 30_000 }, async () => {
    const { handle, calls, setTools } = start([STATUS_TOOL, DELETE_DB_TOOL], 'exclude: ["delete_*"]');
    await handle.start();
    const status = handle.tools().find((tool) => tool.name === 'db.status')!;
    setTools([DELETE_DB_TOOL]);
    await until(() => !handle.tools().some((tool) => tool.name === 'db.status'), 'status gone from the list');

    await expect(status.execute!({}, context)).rejects.toThrow('MCP server db no longer offers db.status; db.status did not run.');
    expect(calls()).toEqual([]);
  });
});
