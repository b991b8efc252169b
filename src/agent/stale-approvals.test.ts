import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { decidedStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { definitionFingerprintOf } from '../tools/definition-fingerprint.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { closeStaleApprovals } from './stale-approvals.js';

/** `parameters`: what a release's schema declares; a deploy that changes them changes what runs. */
function restartTool(parameters: Record<string, object>): ToolDefinition {
  return { name: 'restart_service', description: 'Restart a deployment', inputSchema: jsonSchema({ type: 'object', properties: parameters }), execute: async () => 'ok' } as ToolDefinition;
}

const SERVICE = { service: { type: 'string' } };

async function stepApprovedFor(tool: ToolDefinition | undefined): Promise<PendingStep> {
  const step = decidedStep([{ approvalId: 'a1', toolCallId: 'c1', toolName: 'restart_service', input: { service: 'api' } }], { a1: { outcome: 'approved', userId: 'UBOB' } });
  const fingerprint = tool ? await definitionFingerprintOf(tool) : undefined;
  return { ...step, calls: step.calls.map((call) => (fingerprint === undefined ? call : { ...call, definitionFingerprint: fingerprint })) };
}

describe('closeStaleApprovals', () => {
  it('leaves an approval of the tool as it is now', async () => {
    const tool = restartTool(SERVICE);
    const step = await stepApprovedFor(tool);
    expect(await closeStaleApprovals({ step, tools: [tool], at: 5 })).toEqual({ step, stale: [] });
  });

  it('closes an approval of a tool a deploy changed, as countersign, saying why', async () => {
    const step = await stepApprovedFor(restartTool(SERVICE));
    const { step: closed, stale } = await closeStaleApprovals({ step, tools: [restartTool({ ...SERVICE, force: { type: 'boolean', default: true } })], at: 5 });
    expect(stale).toEqual([expect.objectContaining({ approvalId: 'a1', code: 'tool-changed' })]);
    expect(closed.decisions.a1).toEqual({ outcome: 'denied', userId: 'countersign', at: 5, reason: '`restart_service` changed since it was approved (a deploy updated its definition), so nothing was run' });
    // The step as read is not changed in place: a lost claim leaves it as it was.
    expect(step.decisions.a1?.outcome).toBe('approved');
  });

  it('closes an approval of a tool this process does not have, even one recorded without a fingerprint', async () => {
    const step = await stepApprovedFor(undefined);
    const { step: closed, stale } = await closeStaleApprovals({ step, tools: [], at: 5 });
    expect(stale).toEqual([expect.objectContaining({ approvalId: 'a1', code: 'tool-unavailable' })]);
    expect(closed.decisions.a1?.reason).toContain('is not available now');
  });

  it('judges a step stored before fingerprints by name alone, and leaves calls nobody approved', async () => {
    const unrecorded = await stepApprovedFor(undefined);
    expect((await closeStaleApprovals({ step: unrecorded, tools: [restartTool({ other: { type: 'number' } })], at: 5 })).stale).toEqual([]);
    const denied = decidedStep([{ approvalId: 'a1', toolCallId: 'c1', toolName: 'restart_service', input: {} }], { a1: { outcome: 'denied', userId: 'UBOB' } });
    expect((await closeStaleApprovals({ step: denied, tools: [], at: 5 })).stale).toEqual([]);
  });
});
