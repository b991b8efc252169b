import { describe, expect, it } from 'vitest';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { DELETE_DATABASE_TOOL, STATUS_TOOL, useMutableMcpServers } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * A server says its tools changed (notifications/tools/list_changed) and then fails the tools/list
 * that would say how: its list handler's backend is down, it timed out. Before the fix the failure
 * was logged and nothing else happened: the bot kept offering the list from before and a turn's
 * held definitions kept running, so a tool whose schema now takes a destructive flag was called
 * with the old input (and approvals bound to the old definition applied), until some later
 * notification or reconnect, never if the server sent none.
 */
const startServer = useMutableMcpServers();
const context = { toolCallId: 'c1', idempotencyKey: 'k', teamId: 'T', channel: 'C', threadTs: '1', requesterId: 'U' } as never;

/** delete_database as the server defines it after the change: it also drops the backups unless told not to. */
const DELETE_DATABASE_WITH_BACKUPS = {
  ...DELETE_DATABASE_TOOL,
  inputSchema: { type: 'object', properties: { name: { type: 'string' }, keepBackups: { type: 'boolean', default: false } } },
};

describe('an MCP server whose latest tools/list fails', () => {
  it("refuses its tools' calls as not run and lists again with backoff until a list succeeds", { timeout: 30_000 }, async () => {
    const { handle, calls, asked, logged, setTools, failLists } = startServer({ tools: [STATUS_TOOL, DELETE_DATABASE_TOOL], filterYaml: '', logLevel: 'warn' });
    await handle.start();
    const heldDelete = handle.tools().find((tool) => tool.name === 'db.delete_database')!;
    const heldStatus = handle.tools().find((tool) => tool.name === 'db.status')!;

    failLists('backend unreachable');
    const askedBefore = asked();
    setTools([STATUS_TOOL, DELETE_DATABASE_WITH_BACKUPS]);
    await until(() => logged.some((line) => line.event === 'mcp-tools-refresh-failed'), 'the failed list logged');

    // The old definitions may be wrong now: nothing reaches the server, and the turn records the call as not run.
    for (const held of [heldDelete, heldStatus]) {
      const refused = await held.execute!({ name: 'staging' }, context).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isToolNotStartedError(refused) && refused.reason).toBe('list-stale');
      expect((refused as Error).message).toMatch(/^MCP server db changed its tools and its new tool list could not be read \(.*backend unreachable.*\); .* did not run\.$/);
    }
    expect(calls()).toEqual([]);
    expect(handle.status().warnings?.map((warning) => warning.code)).toEqual(['mcp-tools-list-stale']);
    expect(logged).toContainEqual(expect.objectContaining({ level: 50, event: 'mcp-tools-refresh-failed', mcpServer: 'db' }));

    // Listed again without any notification (backoff from 1 s): the first retry fails too, then the backend is back.
    await until(() => asked() >= askedBefore + 2, 'a retried tools/list');
    failLists(undefined);
    await until(() => handle.status().warnings === undefined, 'a list read again', 15_000);

    const deleteNow = handle.tools().find((tool) => tool.name === 'db.delete_database')!;
    expect(deleteNow).not.toBe(heldDelete);
    expect(JSON.stringify(deleteNow.inputSchema)).toContain('keepBackups');
    await expect(heldStatus.execute!({}, context)).resolves.toEqual(expect.objectContaining({ text: 'ran status with {}' }));
  });

  it('refuses them too when the list times out, until a list is read in time', { timeout: 30_000 }, async () => {
    const { handle, calls, logged, setTools } = startServer({ tools: [STATUS_TOOL], filterYaml: 'connectTimeoutSeconds: 1', logLevel: 'warn' });
    await handle.start();
    const heldStatus = handle.tools()[0]!;

    // The server's list handler now takes longer than the bot waits.
    setTools({ delayMs: 3000, tools: [{ ...STATUS_TOOL, inputSchema: { type: 'object', properties: { verbose: { type: 'boolean' } } } }] });
    await until(() => logged.some((line) => line.event === 'mcp-tools-refresh-failed'), 'the timed-out list logged');
    await expect(heldStatus.execute!({}, context)).rejects.toThrow(/^MCP server db changed its tools and its new tool list could not be read \(.*timed out.*\); .*db\.status did not run\.$/);
    expect(calls()).toEqual([]);
    expect(handle.status()).toMatchObject({ state: 'connected', warnings: [expect.objectContaining({ code: 'mcp-tools-list-stale' })] });

    setTools([STATUS_TOOL]);
    await until(() => handle.status().warnings === undefined, 'a list read in time', 15_000);
    await expect(heldStatus.execute!({}, context)).resolves.toEqual(expect.objectContaining({ text: 'ran status with {}' }));
  });
});
