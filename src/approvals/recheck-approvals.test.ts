import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../config/config-file.js';
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

const step: PendingStep = {
  schemaVersion: 1,
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
      policy: evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C', input: {} }),
    },
  ],
  decisions: { a1: { outcome: 'approved', userId: 'U0BOB', at: 2 } },
  phase: 'resumed',
  revision: 1,
};

describe('recheckApprovals at resume', () => {
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
});
