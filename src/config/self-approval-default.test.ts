import { describe, expect, it } from 'vitest';
import { parseConfigFile } from './config-file.js';
import { ConfigError } from './config-error.js';
import { evaluatePolicy } from '../approvals/policy/evaluate-policy.js';
import { authorizeApprover } from '../approvals/policy/authorize-approver.js';

/**
 * Reviewer's test. policy-config-schema.ts: "every rule carries its effective settings (its own,
 * else `defaults`, else the built-ins)", and the example: each rule setting "may also go under
 * defaults". An operator who writes `defaults: { allowSelfApproval: false }` (the sandbox example
 * does, "a requester who is also an approver still needs someone else") and a rule that opens
 * approval to the channel, without writing allowSelfApproval in the rule, gets a rule where the
 * requester approves their own call alone: resolveSettings takes the value implied by the rule's
 * approvers (channel: true) over the explicit false of defaults. The config loads without a word.
 */
const YAML = `
tools:
  - name: restart_service
    description: Restart a deployment
    command: ["kubectl", "rollout", "restart", "deployment/{service}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
policy:
  defaults:
    approvers: [U0BOB, U0CAROL]
    allowSelfApproval: false   # nobody approves their own request
  rules:
    - name: restarts
      tools: [restart_service]
      approvers: [channel]     # anyone in the channel may approve restarts
`;

describe('defaults.allowSelfApproval: false and a rule with approvers: [channel]', () => {
  it('does not let the requester approve their own call (or is refused at load)', () => {
    let config: ReturnType<typeof parseConfigFile>;
    try {
      config = parseConfigFile(YAML, 'countersign.yml');
    } catch (error) {
      if (ConfigError.isInstance(error)) return; // refusing the contradiction would be fine too
      throw error;
    }
    const evaluation = evaluatePolicy({ policy: config.policy, toolName: 'restart_service', channel: 'C0OPS', input: { service: 'api' } });
    const selfApproval = authorizeApprover({ evaluation, userId: 'U0ALICE', requesterId: 'U0ALICE', groupMembers: new Map(), approvedBy: [] });
    expect({ allowSelfApproval: evaluation.allowSelfApproval, aliceApprovesHerOwn: selfApproval.allowed }).toEqual({ allowSelfApproval: false, aliceApprovesHerOwn: false });
  });
});

describe('self-approval: the stricter of an explicit default and what a rule\'s approvers imply', () => {
  const TOOLS = 'tools:\n  - { name: a, description: A, command: ["a"] }\n';
  const selfApprovalOf = (policy: string) => parseConfigFile(`${TOOLS}policy:\n${policy}`, 'countersign.yml').policy.rules[0]?.allowSelfApproval;

  it.each([
    ['false by default, channel in the rule', '  defaults: { allowSelfApproval: false }\n  rules: [{ tools: [a], approvers: [channel] }]', false],
    ['true by default, channel in the rule', '  defaults: { allowSelfApproval: true }\n  rules: [{ tools: [a], approvers: [channel] }]', true],
    ['true by default, named users in the rule', '  defaults: { allowSelfApproval: true }\n  rules: [{ tools: [a], approvers: [U0ALICE] }]', false],
    ['no default, channel in the rule', '  defaults: { approvers: [U0BOB] }\n  rules: [{ tools: [a], approvers: [channel] }]', true],
    ["false by default, the rule's own true", '  defaults: { allowSelfApproval: false }\n  rules: [{ tools: [a], approvers: [channel], allowSelfApproval: true }]', true],
    ['false by default, the rule names no approvers', '  defaults: { allowSelfApproval: false }\n  rules: [{ tools: [a] }]', false],
  ])('%s', (_case, policy, expected) => {
    expect(selfApprovalOf(policy)).toBe(expected);
  });

  it('refuses a rule listing requester under defaults.allowSelfApproval: false, which would make requester no approver at all', () => {
    let problems: string[] = [];
    try {
      selfApprovalOf('  defaults: { allowSelfApproval: false }\n  rules: [{ tools: [a], approvers: [requester, U0BOB] }]');
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      problems = error.problems.map((problem) => `${problem.field}: ${problem.message}`);
    }
    expect(problems).toEqual([
      'countersign.yml policy.rules[0].approvers: lists requester, but allowSelfApproval is false (inherited from defaults); set allowSelfApproval: true in this rule to let requesters approve their own calls, or remove requester',
    ]);
    expect(selfApprovalOf('  defaults: { allowSelfApproval: false }\n  rules: [{ tools: [a], approvers: [requester, U0BOB], allowSelfApproval: true }]')).toBe(true);
  });
});
