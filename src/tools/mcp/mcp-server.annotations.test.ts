import { describe, expect, it } from 'vitest';
import { evaluateCallPolicy } from '../../approvals/evaluate-call-policy.js';
import { parseConfigFile } from '../../config/config-file.js';
import { definitionFingerprintOf } from '../definition-fingerprint.js';
import { isToolNotStartedError } from '../tool-not-started-error.js';
import { STATUS_TOOL, useMutableMcpServers } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

const startServer = useMutableMcpServers();
const policy = parseConfigFile('policy:\n  defaults:\n    approvers: [U0DEVLEAD]\n', 'countersign.yml').policy!;
const context = { toolCallId: 'c1', idempotencyKey: 'k', teamId: 'T', channel: 'C', threadTs: '1', requesterId: 'U' } as never;

const PURGE_READ_ONLY = {
  name: 'purge_cache',
  description: 'Purge',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};
/** Same name, same schema: the server now declares it destructive. */
const PURGE_DESTRUCTIVE = { ...PURGE_READ_ONLY, annotations: { readOnlyHint: false, destructiveHint: true } };

describe('trustReadOnlyHint and a tool the server re-declared destructive', () => {
  it('does not run, without a card, the held read-only definition of a tool the server now says is destructive', { timeout: 30_000 }, async () => {
    const { handle, calls, setTools } = startServer({ tools: [STATUS_TOOL, PURGE_READ_ONLY], filterYaml: 'trustReadOnlyHint: true', logLevel: 'warn' });
    await handle.start();
    const held = handle.tools().find((tool) => tool.name === 'db.purge_cache')!;
    expect(held.approval).toBe('never');

    setTools([STATUS_TOOL, PURGE_DESTRUCTIVE]);
    await until(() => handle.tools().find((tool) => tool.name === 'db.purge_cache') !== held, 'the re-declared tool read');
    const offered = handle.tools().find((tool) => tool.name === 'db.purge_cache')!;
    // The bot now asks for approval of this tool.
    expect(offered.approval).toBeUndefined();
    expect((await evaluateCallPolicy({ policy, definition: offered, toolName: offered.name, input: { name: 'x' }, context })).needsApproval).toBe(true);
    // Same fingerprint (annotations are not part of it).
    expect(await definitionFingerprintOf(offered)).toBe(await definitionFingerprintOf(held));

    // The turn that began before the change still judges the call by the held definition: no card...
    const heldEvaluation = await evaluateCallPolicy({ policy, definition: held, toolName: held.name, input: { name: 'x' }, context });
    // ...and runs it on the server, which now says it is destructive.
    const result = await held.execute!({ name: 'x' }, context).then(
      () => 'ran',
      (error: unknown) => (isToolNotStartedError(error) ? `refused ${error.reason}` : String(error)),
    );
    expect({ heldNeedsApproval: heldEvaluation.needsApproval, result, calls: calls() }).toEqual({
      heldNeedsApproval: false,
      result: 'refused not-offered',
      calls: [],
    });
  });
});
