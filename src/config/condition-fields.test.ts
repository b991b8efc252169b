import { describe, expect, it } from 'vitest';
import { parseConfigFile } from './config-file.js';
import { ConfigError } from './config-error.js';
import { evaluatePolicy } from '../approvals/policy/evaluate-policy.js';

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems.map((problem) => `${problem.field}: ${problem.message}`);
    throw error;
  }
  return [];
}

describe('a policy input condition on a parameter the tool does not have', () => {
  it('reports input: on a field the command tool declares no parameter for (prod restarts fall to the lax rule)', () => {
    const yaml = `
tools:
  - name: restart_service
    description: Restart a deployment
    command: ["kubectl", "rollout", "restart", "deployment/{service}", "-n", "{namespace}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      namespace: { type: string, enum: [staging, prod] }
policy:
  rules:
    - { name: prod restarts, tools: [restart_service], input: [{ field: namspace, equals: prod }], approvers: ["group:S0SRE"], required: 2 }
    - { name: other restarts, tools: [restart_service] }
`;
    let accepted: ReturnType<typeof parseConfigFile> | undefined;
    const found = problems(() => {
      accepted = parseConfigFile(yaml, 'countersign.yml');
    });
    if (accepted !== undefined) {
      const evaluation = evaluatePolicy({ policy: accepted.policy, toolName: 'restart_service', channel: 'C0OPS', input: { service: 'api', namespace: 'prod' } });
      // What the accepted config means: a prod restart is approved by anyone in the channel, alone.
      expect({ rule: evaluation.rule?.name, approvers: evaluation.approvers, required: evaluation.required }).toEqual({ rule: 'other restarts', approvers: [{ kind: 'channel' }], required: 1 });
    }
    expect(found).toContainEqual(expect.stringContaining('policy.rules[0].input[0].field'));
  });
});

describe('approval.when on a parameter the tool does not have', () => {
  it('reports approval.when on a field the command tool lacks (a prod restart then needs no approval at all)', () => {
    const yaml = `
tools:
  - name: restart_service
    description: Restart a deployment
    command: ["kubectl", "rollout", "restart", "deployment/{service}", "-n", "{namespace}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      namespace: { type: string, enum: [staging, prod] }
policy:
  rules:
    - tools: [restart_service]
      approval: { when: [{ field: namspace, equals: prod }] }
      approvers: ["group:S0SRE"]
`;
    let accepted: ReturnType<typeof parseConfigFile> | undefined;
    const found = problems(() => {
      accepted = parseConfigFile(yaml, 'countersign.yml');
    });
    if (accepted !== undefined) {
      const evaluation = evaluatePolicy({ policy: accepted.policy, toolName: 'restart_service', channel: 'C0OPS', input: { service: 'api', namespace: 'prod' } });
      // What the accepted config means: the prod restart runs without a card.
      expect(evaluation.needsApproval).toBe(false);
    }
    expect(found).toContainEqual(expect.stringContaining('policy.rules[0].approval.when[0].field'));
  });
});
