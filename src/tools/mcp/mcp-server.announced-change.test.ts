import { describe, expect, it } from 'vitest';
import { DELETE_DATABASE_TOOL, DELETE_DATABASE_WITH_BACKUPS, outcome, STATUS_TOOL, TOOL_CONTEXT as context, useMutableMcpServers } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * From the server's tools/list_changed until the list it calls for is read (its answer can take up to
 * connectTimeoutSeconds), the definitions from before may be wrong: the server's tools are refused as not run.
 */
const startServer = useMutableMcpServers();

describe('an MCP server that said its tools changed', () => {
  it('does not run the old definition while the list the server announced is still being read', { timeout: 30_000 }, async () => {
    const { handle, calls, asked, setTools } = startServer({ tools: [STATUS_TOOL, DELETE_DATABASE_TOOL], filterYaml: 'connectTimeoutSeconds: 20', logLevel: 'warn' });
    await handle.start();
    const heldDelete = handle.tools().find((tool) => tool.name === 'db.delete_database')!;
    const askedBefore = asked();

    // The server says its tools changed; its list handler is slow (5 s).
    setTools({ delayMs: 5000, tools: [STATUS_TOOL, DELETE_DATABASE_WITH_BACKUPS] });
    // Barrier: the bot was told and asked for the new list (the server counted the tools/list).
    await until(() => asked() > askedBefore, 'the new tools/list asked');

    const result = await outcome(heldDelete.execute!({ name: 'staging' }, context));
    expect(calls()).toEqual([]);
    expect(result).toEqual({ refused: 'list-stale' });
    // Its tool that did not change runs again once the list is read.
    const heldStatus = handle.tools().find((tool) => tool.name === 'db.status')!;
    await expect(heldStatus.execute!({}, context)).rejects.toThrow('MCP server db said its tools changed and its new tool list is not read yet; db.status did not run.');
    await until(() => JSON.stringify(handle.tools()).includes('keepBackups'), 'the new list read', 15_000);
    await heldStatus.execute!({}, context);
    expect(calls()).toEqual([JSON.stringify({ name: 'status', arguments: {} })]);
  });
});
