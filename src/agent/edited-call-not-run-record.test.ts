import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inputHash } from '../approvals/input-version.js';
import { defineTool } from '../tools/tool-definition.js';
import { ToolNotStartedError } from '../tools/tool-not-started-error.js';
import type { EditNote } from './edit-note.js';
import { createTurnTools, type ApprovedRun, type ExecutionRecord } from './tool-set.js';
import { createTurnRuns } from './turn-runs.js';

/**
 * Every "not run" answer of a call a human edited before approving keeps the edit: the model reads
 * the note after the "not run" text (its own call, in the history, is not what was refused) and the
 * record carries the edit, as a failed edited call's does.
 */
const modelInput = { replicas: 10 };
const editedInput = { replicas: 2 };
const edit: EditNote = { version: 1, editedBy: ['<@UBOB>'], changes: ['replicas: 10 → 2'], ranWithInput: editedInput, note: 'n' };
const approvedRun = (definitionFingerprint?: string): ApprovedRun => ({
  toolName: 'scale',
  modelInputHash: inputHash(modelInput),
  input: editedInput,
  inputHash: inputHash(editedInput),
  ...(definitionFingerprint === undefined ? {} : { definitionFingerprint }),
  basis: { kind: 'approval', stepId: 's1', approvalId: 'a1', version: 1, inputHash: inputHash(editedInput), approvedBy: ['UBOB'] },
  edit,
});
const scale = (execute: () => Promise<unknown>) => defineTool({ name: 'scale', description: 'Scale', inputSchema: z.object({ replicas: z.number() }), approval: 'always', execute });

async function answered(options: { definitions: ReturnType<typeof scale>[]; run?: ApprovedRun; closeOnMarker?: boolean }) {
  const executions: ExecutionRecord[] = [];
  const runs = createTurnRuns();
  const tools = createTurnTools({
    definitions: options.definitions,
    context: { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' },
    executions,
    bases: new Map(),
    approvedRuns: new Map([['c1', options.run ?? approvedRun()]]),
    runs,
    // The turn fails while the marker is written.
    beforeExecute: async () => void (options.closeOnMarker ? runs.close() : undefined),
  });
  const error = await (tools.scale!.execute as (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown>)(modelInput, { toolCallId: 'c1', messages: [] }).catch((thrown: unknown) => thrown);
  return { message: (error as Error).message, executions };
}

function expectEditedNotRun({ message, executions }: { message: string; executions: ExecutionRecord[] }, notRunText: RegExp) {
  expect(message).toMatch(notRunText);
  expect(message.indexOf('<@UBOB> changed this call')).toBeGreaterThan(message.search(notRunText));
  expect(message).toContain('Do not re-issue your original call unless the user asks');
  expect(message).toContain('ranWithInput: {"replicas":2}');
  expect(message).not.toContain('It ran with');
  expect(executions).toEqual([{ toolCallId: 'c1', toolName: 'scale', input: expect.anything(), output: message, started: false, edit }]);
}

describe('an edited, approved call answered "not run"', () => {
  it('refused by its tool at its start (ToolNotStartedError)', async () => {
    const refusing = scale(async () => {
      throw new ToolNotStartedError({ toolName: 'scale', reason: 'runner-closed', message: 'scale did not run.' });
    });
    expectEditedNotRun(await answered({ definitions: [refusing] }), /^scale did not run\./);
  });

  it('its turn failed while its marker was written', async () => {
    const ran: unknown[] = [];
    const result = await answered({ definitions: [scale(async () => void ran.push(1))], closeOnMarker: true });
    expect(ran).toEqual([]);
    expectEditedNotRun(result, /^Not run: the turn had already failed\./);
  });

  it('its tool changed since the approval', async () => {
    const ran: unknown[] = [];
    const result = await answered({ definitions: [scale(async () => void ran.push(1))], run: approvedRun('an older definition') });
    expect(ran).toEqual([]);
    expectEditedNotRun(result, /^Not run: `scale` changed since this was approved/);
  });

  it('its edited input no longer fits the tool\'s schema', async () => {
    const ran: unknown[] = [];
    const unfit = { ...approvedRun(), input: { replicas: 'two' }, inputHash: inputHash({ replicas: 'two' }), edit: { ...edit, ranWithInput: { replicas: 'two' } } };
    const result = await answered({ definitions: [scale(async () => void ran.push(1))], run: unfit });
    expect(ran).toEqual([]);
    expect(result.message).toMatch(/^Not run: `scale`'s parameters changed[\s\S]*<@UBOB> changed this call[\s\S]*ranWithInput: \{"replicas":"two"\}/);
    expect(result.executions).toEqual([expect.objectContaining({ started: false, edit: unfit.edit })]);
  });

  it('its tool is not available in this process', async () => {
    const executions: ExecutionRecord[] = [];
    const tools = createTurnTools({ definitions: [], context: { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' }, executions, bases: new Map(), approvedRuns: new Map([['c1', approvedRun()]]) });
    const error = await (tools.scale!.execute as (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown>)(modelInput, { toolCallId: 'c1', messages: [] }).catch((thrown: unknown) => thrown);
    expectEditedNotRun({ message: (error as Error).message, executions }, /^Not run:/);
  });
});
