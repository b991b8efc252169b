import { describe, expect, it } from 'vitest';
import { definitionFingerprintOf } from '../definition-fingerprint.js';
import { DELETE_DATABASE_TOOL, DELETE_DATABASE_WITH_BACKUPS, outcome, STATUS_TOOL, TOOL_CONTEXT as context, useMutableMcpServers } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

const startServer = useMutableMcpServers();

describe('a turn holding a definition of a tool the server redefined', () => {
  it('does not run the old definition once the new list was read (same name, new schema)', { timeout: 30_000 }, async () => {
    const { handle, calls, setTools } = startServer({ tools: [STATUS_TOOL, DELETE_DATABASE_TOOL], filterYaml: '', logLevel: 'warn' });
    await handle.start();
    // A turn started now holds these definitions for all its steps (createTurnTools).
    const heldDelete = handle.tools().find((tool) => tool.name === 'db.delete_database')!;

    setTools([STATUS_TOOL, DELETE_DATABASE_WITH_BACKUPS]);
    // Barrier: the new list was read and applied (a new definition object for delete_database).
    await until(() => handle.tools().find((tool) => tool.name === 'db.delete_database') !== heldDelete && true, 'the redefined tool read');
    expect(JSON.stringify(handle.tools().find((tool) => tool.name === 'db.delete_database')!.inputSchema)).toContain('keepBackups');

    // The turn's next step calls the tool as the model saw it (no keepBackups): the server now drops the backups.
    const result = await outcome(heldDelete.execute!({ name: 'staging' }, context));
    expect(calls()).toEqual([]);
    expect(result).toEqual({ refused: 'not-offered' });
    // As an approval or a grant bound to the held definition would be judged: it is another tool now.
    const offered = handle.tools().find((tool) => tool.name === 'db.delete_database')!;
    expect(await definitionFingerprintOf(offered)).not.toBe(await definitionFingerprintOf(heldDelete));
    await expect(heldDelete.execute!({ name: 'staging' }, context)).rejects.toThrow(
      'MCP server db changed db.delete_database since this turn began (its input schema is not the one this call was made for); db.delete_database did not run.',
    );
  });

  it('runs the held definition when only its description changed (the same definition fingerprint)', { timeout: 30_000 }, async () => {
    const { handle, calls, setTools } = startServer({ tools: [STATUS_TOOL, DELETE_DATABASE_TOOL], filterYaml: '', logLevel: 'warn' });
    await handle.start();
    const heldDelete = handle.tools().find((tool) => tool.name === 'db.delete_database')!;

    setTools([STATUS_TOOL, { ...DELETE_DATABASE_TOOL, description: 'Drop a database (reworded)' }]);
    await until(() => handle.tools().find((tool) => tool.name === 'db.delete_database') !== heldDelete, 'the reworded tool read');
    const offered = handle.tools().find((tool) => tool.name === 'db.delete_database')!;
    expect(await definitionFingerprintOf(offered)).toBe(await definitionFingerprintOf(heldDelete));

    await outcome(heldDelete.execute!({ name: 'staging' }, context));
    expect(calls()).toEqual([JSON.stringify({ name: 'delete_database', arguments: { name: 'staging' } })]);
  });
});
