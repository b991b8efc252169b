import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../config/config-file.js';
import { inputHash, modelVersion } from './input-version.js';
import type { PendingStep } from './pending-step.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';
import type { CurrentEvaluation } from './policy/governing-policy.js';
import { withAddedApprovers } from './policy/escalated-approvers.js';
import { ladderRuleOf } from './policy/escalation-scope.js';
import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
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
/** The config the card was made under is still the one in force. */
const sameConfig: CurrentEvaluation = async ({ input }) => evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C', input });
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
    const result = await recheckApprovals({ step: tampered, resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0BOB'])]]), currentEvaluation: sameConfig, now: 3 });
    expect(result.step.decisions.a1?.outcome).toBe('denied');
  });

  it('keeps an approval whose approver is still in the group', async () => {
    const result = await recheckApprovals({ step, resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0BOB'])]]), currentEvaluation: sameConfig, now: 3 });
    expect(result.revoked).toEqual([]);
    expect(result.step.decisions.a1?.outcome).toBe('approved');
  });

  it('closes an approved call (as countersign, not as the approver) when the approver left the group before the turn resumed', async () => {
    const result = await recheckApprovals({ step, resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0CAROL'])]]), currentEvaluation: sameConfig, now: 3 });
    expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'U0BOB', reason: expect.stringContaining('Only members of <!subteam^S0ONCALL>') }]);
    expect(result.step.decisions.a1).toMatchObject({ outcome: 'denied', userId: COUNTERSIGN_ACTOR });
    expect(result.step.decisions.a1?.reason).toContain('the approval by <@U0BOB> no longer holds');
  });

  it('turns an approval by someone whose answer to the turn\'s question led to the call into a denial, saying why', async () => {
    const steered: PendingStep = { ...step, requesterId: 'schedule:heartbeat', instigatorIds: ['U0BOB'] };
    const result = await recheckApprovals({ step: steered, resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0BOB'])]]), currentEvaluation: sameConfig, now: 3 });
    expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'U0BOB', reason: expect.stringContaining('You wrote the answer or deny reason that led to this request') }]);
    expect(result.step.decisions.a1?.reason).toBe(
      'the approval by <@U0BOB> no longer holds (they wrote the answer or deny reason that led to this request, and this rule needs someone else to approve it)',
    );
  });

  it('reads the groups fresh, past any cache: this check decides whether the call runs', async () => {
    const reads: Array<{ groupIds: readonly string[]; fresh: boolean }> = [];
    await recheckApprovals({
      step,
      resolveGroups: async (groupIds, options) => {
        reads.push({ groupIds, fresh: options.fresh });
        return new Map([['S0ONCALL', new Set(['U0BOB'])]]);
      },
      currentEvaluation: sameConfig,
      now: 3,
    });
    expect(reads).toEqual([{ groupIds: ['S0ONCALL'], fresh: true }]);
  });

  it('leaves an approval whose group could not be read approved and unchecked, blaming nobody', async () => {
    const result = await recheckApprovals({ step, resolveGroups: async () => new Map(), currentEvaluation: sameConfig, now: 3 });
    expect(result.revoked).toEqual([]);
    expect(result.unchecked).toEqual([{ approvalId: 'a1', groupIds: ['S0ONCALL'] }]);
    expect(result.step.decisions.a1?.outcome).toBe('approved');
  });
});

describe('recheckApprovals after a deploy changed the policy between the approval and the resume', () => {
  /** The config a replica runs with after the deploy; `rules` under `policy.rules`. */
  const deployed = (rules: string): CurrentEvaluation => {
    const after = parseConfigFile(`policy:\n  rules:\n${rules}`, 'test.yml').policy;
    return async ({ input }) => evaluatePolicy({ policy: after, toolName: 'restart_service', channel: 'C', input });
  };
  const groups = (members: Record<string, string[]>) => async () => new Map(Object.entries(members).map(([groupId, userIds]) => [groupId, new Set(userIds)]));

  it('revokes an approval by someone the config in force no longer lets approve, and says why', async () => {
    const result = await recheckApprovals({
      step,
      resolveGroups: groups({ S0ONCALL: ['U0BOB'], S0LEADS: ['U0LEAD'] }),
      currentEvaluation: deployed('    - tools: [restart_service]\n      approvers: ["group:S0LEADS"]\n'),
      now: 3,
    });
    expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'U0BOB', reason: expect.stringContaining('Only members of <!subteam^S0LEADS> can approve this under the approval policy now in force') }]);
    expect(result.step.decisions.a1).toMatchObject({ outcome: 'denied', userId: COUNTERSIGN_ACTOR, reason: expect.stringContaining('the approval by <@U0BOB> no longer holds') });
  });

  it('revokes an approval short of a quorum the config in force raised', async () => {
    const result = await recheckApprovals({
      step,
      resolveGroups: groups({ S0ONCALL: ['U0BOB'] }),
      currentEvaluation: deployed('    - tools: [restart_service]\n      approvers: ["group:S0ONCALL"]\n      required: 2\n'),
      now: 3,
    });
    expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'U0BOB', reason: expect.stringContaining('fewer approvals than the rule requires under the approval policy now in force') }]);
    expect(result.step.decisions.a1?.outcome).toBe('denied');
  });

  it('does not let a loosened config keep an approval the card\'s rule no longer allows', async () => {
    const result = await recheckApprovals({ step, resolveGroups: groups({ S0ONCALL: ['U0CAROL'] }), currentEvaluation: deployed('    - tools: [restart_service]\n      approvers: [channel]\n'), now: 3 });
    expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'U0BOB', reason: expect.stringContaining('Only members of <!subteam^S0ONCALL>') }]);
  });

  it('keeps an approval the config in force allows too, even if it names more approvers', async () => {
    const result = await recheckApprovals({
      step,
      resolveGroups: groups({ S0ONCALL: ['U0BOB'] }),
      currentEvaluation: deployed('    - tools: [restart_service]\n      approvers: ["group:S0ONCALL", U0CAROL]\n'),
      now: 3,
    });
    expect(result.revoked).toEqual([]);
    expect(result.step.decisions.a1?.outcome).toBe('approved');
  });

  describe('a fallback approver an escalation hop added', () => {
    const ladderRule = parseConfigFile(
      `
policy:
  rules:
    - tools: [restart_service]
      approvers: ["group:S0ONCALL"]
      escalation: [{ after: 30m, addApprovers: [U0LEAD] }]
`,
      'test.yml',
    ).policy;
    const evaluation = evaluatePolicy({ policy: ladderRule, toolName: 'restart_service', channel: 'C', input: {} });
    const afterHop = withAddedApprovers(evaluation, [{ kind: 'user', userId: 'U0LEAD' }]);
    const escalated: PendingStep = {
      ...step,
      calls: [{ ...step.calls[0]!, policy: evaluation, versions: [modelVersion({ input: {}, policy: afterHop, at: 1 })] }],
      escalation: { ladder: evaluation.escalation!, rule: ladderRuleOf(evaluation), done: 1, nextAt: Number.MAX_SAFE_INTEGER },
      decisions: { a1: { outcome: 'approved', userId: 'U0LEAD', at: 2, version: 0, inputHash: inputHash({}), approvedBy: ['U0LEAD'] } },
    };

    it('still counts while the config in force keeps the ladder\'s rule', async () => {
      const unchanged: CurrentEvaluation = async ({ input }) => evaluatePolicy({ policy: ladderRule, toolName: 'restart_service', channel: 'C', input });
      const result = await recheckApprovals({ step: escalated, resolveGroups: groups({ S0ONCALL: ['U0BOB'] }), currentEvaluation: unchanged, now: 3 });
      expect(result.revoked).toEqual([]);
      expect(result.step.decisions.a1?.outcome).toBe('approved');
    });

    it('no longer counts once the config in force has another rule for the call', async () => {
      const result = await recheckApprovals({
        step: escalated,
        resolveGroups: groups({ S0ONCALL: ['U0BOB'] }),
        currentEvaluation: deployed('    - tools: [restart_service]\n      approvers: ["group:S0ONCALL"]\n'),
        now: 3,
      });
      expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'U0LEAD', reason: expect.stringContaining('under the approval policy now in force') }]);
    });
  });
});

describe('recheckApprovals of an approval the onApprovalRequest hook gave', () => {
  const byHook: PendingStep = { ...step, decisions: { a1: { outcome: 'approved', userId: 'hook:staging-only', at: 2, version: 0, inputHash: inputHash({}), approvedBy: ['hook:staging-only'] } } };
  const deployed = (rules: string): CurrentEvaluation => {
    const after = parseConfigFile(`policy:\n  rules:\n${rules}`, 'test.yml').policy;
    return async ({ input }) => evaluatePolicy({ policy: after, toolName: 'restart_service', channel: 'C', input });
  };
  const noGroups = async () => new Map();

  it('keeps it, with no group read, while the same hook is in force and the rule still lets a hook approve', async () => {
    const result = await recheckApprovals({ step: byHook, resolveGroups: noGroups, currentEvaluation: sameConfig, hookInForce: 'staging-only', now: 3 });
    expect(result).toMatchObject({ revoked: [], unchecked: [] });
    expect(result.step.decisions.a1?.outcome).toBe('approved');
  });

  it('closes it by countersign, naming the hook, once the config in force forbids automatic approval of the tool', async () => {
    const result = await recheckApprovals({
      step: byHook,
      resolveGroups: noGroups,
      currentEvaluation: deployed('    - tools: [restart_service]\n      approvers: ["group:S0ONCALL"]\n      autoApprove: forbidden\n'),
      hookInForce: 'staging-only',
      now: 3,
    });
    expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'hook:staging-only', reason: expect.stringContaining('forbids automatic approval of this tool under the approval policy now in force') }]);
    expect(result.step.decisions.a1).toMatchObject({ outcome: 'denied', userId: COUNTERSIGN_ACTOR, reason: expect.stringContaining('the approval by the policy hook staging-only no longer holds') });
  });

  it('closes it when no hook, or another hook, is configured now', async () => {
    for (const hookInForce of [undefined, 'change-calendar']) {
      const result = await recheckApprovals({ step: byHook, resolveGroups: noGroups, currentEvaluation: sameConfig, ...(hookInForce ? { hookInForce } : {}), now: 3 });
      expect(result.revoked).toEqual([{ approvalId: 'a1', userId: 'hook:staging-only', reason: hookInForce ? 'the approval hook configured now is change-calendar, not staging-only' : 'no approval hook is configured now' }]);
      expect(result.step.decisions.a1).toMatchObject({ outcome: 'denied', userId: COUNTERSIGN_ACTOR });
    }
  });
});
