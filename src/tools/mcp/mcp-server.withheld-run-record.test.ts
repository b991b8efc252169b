import { describe, expect, it } from 'vitest';
import { inputHash } from '../../approvals/input-version.js';
import { createTurnTools, type ApprovedRun, type AutomaticApproval, type ExecutionRecord, type ExecutionReport } from '../../agent/tool-set.js';
import { DELETE_DATABASE_TOOL, DELETE_DB_TOOL, STATUS_TOOL, useMutableMcpServers } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * A call let through without a card (auto-approve, a grant) whose held definition belongs to a withheld
 * server, refused at its start ("did not run", 28114a0), is recorded as not run, and the thread is not
 * told it "ran without a card" (before 200e0fd it was recorded as run and failed).
 */

const startServer = useMutableMcpServers();

describe('an auto-approved call of a withheld MCP server, refused at its start', () => {
  it('is recorded as not run and not told as "ran without a card"', { timeout: 30_000 }, async () => {
    const { handle, calls, setTools } = startServer({ tools: [STATUS_TOOL, DELETE_DATABASE_TOOL], filterYaml: 'exclude: [delete_database]', logLevel: 'warn' });
    await handle.start();
    // The turn builds its tool set at its start, with the server's tools on offer.
    const definitions = handle.tools();
    expect(definitions.map((definition) => definition.name)).toEqual(['db.status']);
    const executions: ExecutionRecord[] = [];
    const reports: ExecutionReport[] = [];
    const toldRan: AutomaticApproval[] = [];
    const markers: string[] = [];
    const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };
    const automatic: AutomaticApproval = { toolCallId: 'c1', toolName: 'db.status', input: {}, mode: 'channel', requesterId: 'UALICE' };
    const tools = createTurnTools({
      definitions,
      context,
      executions,
      bases: new Map([['c1', { toolName: 'db.status', modelInputHash: inputHash({}), basis: { kind: 'auto-approve' as const, mode: 'channel' as const } }]]),
      automaticApprovals: new Map([['c1', automatic]]),
      onAutomaticApproval: (approval) => toldRan.push(approval),
      beforeExecute: async (call) => void markers.push(call.toolCallId),
      afterExecute: (report) => void reports.push(report),
    });

    // The server renames the excluded tool: its tools are withheld before the call starts.
    setTools([STATUS_TOOL, DELETE_DB_TOOL]);
    await until(() => handle.tools().length === 0, 'the tools withheld');

    const execute = tools['db.status']!.execute as (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown>;
    await expect(execute({}, { toolCallId: 'c1', messages: [] })).rejects.toThrow(/db\.status did not run/);
    expect(calls()).toEqual([]);

    // Nothing ran: the thread must not say it "ran without a card", and the record must say it did not start.
    expect(toldRan).toEqual([]);
    expect(executions).toEqual([expect.objectContaining({ toolCallId: 'c1', started: false })]);
  });
});

describe('a call approved on a card whose MCP server is gone by its start', () => {
  it('is recorded as not run, and its audit says so', { timeout: 30_000 }, async () => {
    const { handle, calls } = startServer({ tools: [STATUS_TOOL], filterYaml: 'include: [status]', logLevel: 'warn' });
    await handle.start();
    const definitions = handle.tools();
    const executions: ExecutionRecord[] = [];
    const reports: ExecutionReport[] = [];
    const markers: string[] = [];
    const approved: ApprovedRun = {
      toolName: 'db.status',
      modelInputHash: inputHash({}),
      input: {},
      inputHash: inputHash({}),
      basis: { kind: 'approval', stepId: 's1', approvalId: 'a1', version: 0, inputHash: inputHash({}), approvedBy: ['UBOB'] },
    };
    const tools = createTurnTools({
      definitions,
      context: { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' },
      executions,
      approvedRuns: new Map([['c1', approved]]),
      bases: new Map(),
      beforeExecute: async (call) => void markers.push(call.toolCallId),
      afterExecute: (report) => void reports.push(report),
    });

    // Between the claim of the approval and the run, the server goes away.
    await handle.close();

    const execute = tools['db.status']!.execute as (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown>;
    await expect(execute({}, { toolCallId: 'c1', messages: [] })).rejects.toThrow(/MCP server db is not available.*db\.status did not run/);
    expect(calls()).toEqual([]);
    // Its marker was written before the definition refused, so its record must say it did not start.
    expect(markers).toEqual(['c1']);
    expect(executions).toEqual([expect.objectContaining({ toolCallId: 'c1', started: false, output: expect.stringMatching(/did not run/) })]);
    expect(reports).toEqual([expect.objectContaining({ toolCallId: 'c1', status: 'error', error: expect.stringMatching(/did not run/) })]);
  });
});
