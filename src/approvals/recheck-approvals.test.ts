import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../config/config-file.js';
import { inputHash, modelVersion } from './input-version.js';
import type { PendingStep } from './pending-step.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';
import { recheckApprovals } from './recheck-approvals.js';

const { policy } = parseConfigFile(
  `
policy:
  rules:
    - tools: [restart_service]
      approvers: ["group:S0ONCALL"]
`,
  'test.yml',
);

const rule = evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C', input: {} });
const step: PendingStep = {
  schemaVersion: 2,
  stepId: 's1',
  threadKey: 'T:C:1',
  teamId: 'T',
  channel: 'C',
  threadTs: '1',
  requesterId: 'U0ALICE',
  createdAt: 1,
  calls: [
    {
      kind: 'approval',
      approvalId: 'a1',
      toolCallId: 'c1',
      toolName: 'restart_service',
      description: '',
      input: {},
      policy: rule,
      versions: [modelVersion({ input: {}, policy: rule, at: 1 })],
    },
  ],
  decisions: { a1: { outcome: 'approved', userId: 'U0BOB', at: 2, version: 0, inputHash: inputHash({}), approvedBy: ['U0BOB'] } },
  phase: 'resumed',
  revision: 1,
};

describe('recheckApprovals at resume', () => {
  it('turns an approval whose record does not match its input into a denial', async () => {
    const tampered = { ...step, decisions: { a1: { ...step.decisions.a1!, inputHash: inputHash({ other: true }) } } };
    const result = await recheckApprovals({ step: tampered, resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0BOB'])]]), now: 3 });
    expect(result.step.decisions.a1?.outcome).toBe('denied');
  });

  it('keeps an approval whose approver is still in the group', async () => {
    const result = await recheckApprovals({ step, resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0BOB'])]]), now: 3 });
    expect(result.revoked).toEqual([]);
    expect(result.step.decisions.a1?.outcome).toBe('approved');
  });

  it('turns an approval into a denial when the approver left the group before the turn resumed', async () => {
    const result = await recheckApprovals({ step, resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0CAROL'])]]), now: 3 });
    expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'U0BOB', reason: expect.stringContaining('Only members of <!subteam^S0ONCALL>') }]);
    expect(result.step.decisions.a1).toMatchObject({ outcome: 'denied', userId: 'U0BOB' });
    expect(result.step.decisions.a1?.reason).toContain('no longer holds');
  });

  it('reads the groups fresh, past any cache: this check decides whether the call runs', async () => {
    const reads: Array<{ groupIds: readonly string[]; fresh: boolean }> = [];
    await recheckApprovals({
      step,
      resolveGroups: async (groupIds, options) => {
        reads.push({ groupIds, fresh: options.fresh });
        return new Map([['S0ONCALL', new Set(['U0BOB'])]]);
      },
      now: 3,
    });
    expect(reads).toEqual([{ groupIds: ['S0ONCALL'], fresh: true }]);
  });

  it('leaves an approval whose group could not be read approved and unchecked, blaming nobody', async () => {
    const result = await recheckApprovals({ step, resolveGroups: async () => new Map(), now: 3 });
    expect(result.revoked).toEqual([]);
    expect(result.unchecked).toEqual([{ approvalId: 'a1', groupIds: ['S0ONCALL'] }]);
    expect(result.step.decisions.a1?.outcome).toBe('approved');
  });
});
