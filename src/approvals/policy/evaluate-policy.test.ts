import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { approvalDeadlines } from './approval-deadlines.js';
import { isAutoApproveActive } from './auto-approve.js';
import { evaluatePolicy, type ToolApproval } from './evaluate-policy.js';

const policyOf = (yamlText: string) => parseConfigFile(yamlText, 'countersign.yml').policy;

const SPECIFICITY = policyOf(`
policy:
  rules:
    - { name: any tool, tools: ["*"] }
    - { name: restarts, tools: ["restart_*"] }
    - { name: restart api, tools: [restart_api] }
    - { name: ops restarts, tools: ["restart_*"], channels: [C0OPS] }
    - { name: k8s, tools: ["k8s.*"] }
    - { name: any mcp tool, tools: ["**"] }
    - { name: mcp deletes, tools: ["**.delete_*"] }
    - { name: scale first, tools: ["scale_*"] }
    - { name: scale second, tools: ["*cale_d*"] }
    - { name: the bare prefix, tools: [restart_] }
`);

describe('evaluatePolicy rule selection', () => {
  it.each([
    ['list_pods', 'C0DEV', 'any tool'],
    ['restart_worker', 'C0DEV', 'restarts'],
    ['restart_api', 'C0DEV', 'restart api'],
    ['restart_worker', 'C0OPS', 'ops restarts'],
    ['restart_api', 'C0OPS', 'ops restarts'],
    ['k8s.restart_pod', 'C0DEV', 'k8s'],
    ['k8s.apps.restart', 'C0DEV', 'any mcp tool'],
    ['github.repos.delete_branch', 'C0DEV', 'mcp deletes'],
    ['k8s.delete_pod', 'C0DEV', 'mcp deletes'],
    ['scale_deployment', 'C0DEV', 'scale first'],
    ['restart_', 'C0DEV', 'the bare prefix'],
  ])('%s in %s follows "%s"', (toolName, channel, ruleName) => {
    expect(evaluatePolicy({ policy: SPECIFICITY, toolName, channel, input: {} }).rule?.name).toBe(ruleName);
  });

  it('reports the rule by position when it has no name', () => {
    const policy = policyOf('policy:\n  rules: [{ tools: [a] }, { tools: [b] }]');
    expect(evaluatePolicy({ policy, toolName: 'b', channel: 'C1', input: {} }).rule).toEqual({ index: 1, fingerprint: expect.any(String) });
  });

  it('ignores a channel rule elsewhere and falls back to no rule', () => {
    const policy = policyOf('policy:\n  rules: [{ tools: [deploy], channels: [C0OPS], approval: never }]');
    expect(evaluatePolicy({ policy, toolName: 'deploy', channel: 'C0DEV', input: {} })).toMatchObject({ rule: undefined, needsApproval: true });
    expect(evaluatePolicy({ policy, toolName: 'deploy', channel: 'C0OPS', input: {} })).toMatchObject({ rule: { index: 0 }, needsApproval: false });
  });
});

describe('evaluatePolicy approval', () => {
  const policy = policyOf(`
policy:
  rules:
    - tools: [restart_service]
      approval: { when: [{ field: namespace, equals: prod }] }
    - tools: [scale_deployment]
      approval:
        when: [{ field: namespace, oneOf: [prod, prod-eu] }, { field: replicas, greaterThan: 10 }]
    - tools: [deploy]
      approval:
        match: any
        when: [{ field: image, matches: "^registry\\\\.internal/" }, { field: replicas, lessThan: 1 }]
    - { tools: [list_pods], approval: never }
    - { tools: [delete_namespace], approval: always }
`);
  const needsApproval = (toolName: string, input: unknown, toolApproval?: ToolApproval) =>
    evaluatePolicy({ policy, toolName, channel: 'C1', input, toolApproval }).needsApproval;

  it.each([
    ['restart_service', { namespace: 'prod' }, true],
    ['restart_service', { namespace: 'staging' }, false],
    ['restart_service', {}, false],
    ['scale_deployment', { namespace: 'prod-eu', replicas: 12 }, true],
    ['scale_deployment', { namespace: 'prod', replicas: 3 }, false],
    ['scale_deployment', { namespace: 'staging', replicas: 50 }, false],
    ['scale_deployment', { namespace: 'prod', replicas: 'a dozen' }, true],
    ['deploy', { image: 'registry.internal/api:2', replicas: 3 }, true],
    ['deploy', { image: 'docker.io/api:2', replicas: 0 }, true],
    ['deploy', { image: 'docker.io/api:2', replicas: 3 }, false],
    ['list_pods', { namespace: 'prod' }, false],
    ['delete_namespace', { namespace: 'scratch' }, true],
  ])('%s with %j → %s', (toolName, input, expected) => {
    expect(needsApproval(toolName, input)).toBe(expected);
  });

  it.each([
    ['a tool that says never, with no rule', 'read_logs', 'never', false],
    ['a tool that says always, with no rule', 'read_logs', 'always', true],
    ['a tool without its own rule and no policy rule (fails closed)', 'mcp.unknown', undefined, true],
    ['a policy never over a tool that says always', 'list_pods', 'always', false],
    ['a policy always over a tool that says never', 'delete_namespace', 'never', true],
    ['a policy condition over a tool that says always', 'restart_service', 'always', false],
  ] as const)('lets %s decide', (_case, toolName, toolApproval, expected) => {
    expect(needsApproval(toolName, { namespace: 'staging' }, toolApproval)).toBe(expected);
  });
});

describe('evaluatePolicy settings', () => {
  const policy = policyOf(`
policy:
  defaults: { expiry: 8h, reminder: 1h, approvers: ["group:S0ONCALL"], onExpiry: continue, grants: identicalArguments }
  rules:
    - { name: quorum, tools: [drop_table], approvers: [U0ALICE, U0BOB, requester], required: 2, expiry: 2h, reminder: 15m, autoApprove: forbidden, grants: forbidden }
    - { name: inherits, tools: [restart_*] }
`);

  it('applies defaults to a tool no rule covers', () => {
    expect(evaluatePolicy({ policy, toolName: 'mystery', channel: 'C1', input: {} })).toEqual({
      rule: undefined,
      needsApproval: true,
      approvers: [{ kind: 'group', groupId: 'S0ONCALL' }],
      required: 1,
      allowSelfApproval: false,
      expiryMs: 28_800_000,
      reminderMs: 3_600_000,
      onExpiry: 'continue',
      autoApprove: 'allowed',
      grants: 'identicalArguments',
    });
  });

  it("uses a rule's own settings", () => {
    expect(evaluatePolicy({ policy, toolName: 'drop_table', channel: 'C1', input: {} })).toEqual({
      rule: { index: 0, name: 'quorum', fingerprint: expect.any(String) },
      needsApproval: true,
      approvers: [{ kind: 'user', userId: 'U0ALICE' }, { kind: 'user', userId: 'U0BOB' }, { kind: 'requester' }],
      required: 2,
      allowSelfApproval: true,
      expiryMs: 7_200_000,
      reminderMs: 900_000,
      onExpiry: 'continue',
      autoApprove: 'forbidden',
      grants: 'forbidden',
    });
  });

  it('fills what a rule leaves out from defaults', () => {
    expect(evaluatePolicy({ policy, toolName: 'restart_api', channel: 'C1', input: {} })).toMatchObject({
      rule: { index: 1, name: 'inherits' },
      approvers: [{ kind: 'group', groupId: 'S0ONCALL' }],
      expiryMs: 28_800_000,
      grants: 'identicalArguments',
    });
  });

  it('uses the built-in defaults without a policy section', () => {
    expect(evaluatePolicy({ policy: policyOf(''), toolName: 'restart_api', channel: 'C1', input: {} })).toEqual({
      rule: undefined,
      needsApproval: true,
      approvers: [{ kind: 'channel' }],
      required: 1,
      allowSelfApproval: true,
      expiryMs: 86_400_000,
      onExpiry: 'stop',
      autoApprove: 'allowed',
      grants: 'allowed',
    });
  });

  it('hands out copies, so editing an evaluation cannot change the config', () => {
    const evaluation = evaluatePolicy({ policy, toolName: 'drop_table', channel: 'C1', input: {} });
    evaluation.approvers.push({ kind: 'channel' });
    expect(evaluatePolicy({ policy, toolName: 'drop_table', channel: 'C1', input: {} }).approvers).toHaveLength(3);
  });

  it('dates the reminder before the expiry', () => {
    const evaluation = evaluatePolicy({ policy, toolName: 'drop_table', channel: 'C1', input: {} });
    expect(approvalDeadlines({ evaluation, requestedAt: 1_000_000 })).toEqual({ expiresAt: 8_200_000, remindAt: 7_300_000 });
    const noReminder = evaluatePolicy({ policy: policyOf(''), toolName: 'x', channel: 'C1', input: {} });
    expect(approvalDeadlines({ evaluation: noReminder, requestedAt: 0 })).toEqual({ expiresAt: 86_400_000 });
  });
});

describe('isAutoApproveActive', () => {
  const rules = 'rules: [{ tools: [drop_table], autoApprove: forbidden }]';
  it.each([
    ['off by default', 'policy: {}', 'restart', 'C0AUTOMATION', false],
    ['on in a listed channel', 'policy: { autoApprove: { channels: [C0AUTOMATION] } }', 'restart', 'C0AUTOMATION', true],
    ['off in another channel', 'policy: { autoApprove: { channels: [C0AUTOMATION] } }', 'restart', 'C0OPS', false],
    ['on everywhere when global', 'policy: { autoApprove: { global: true } }', 'restart', 'C0OPS', true],
    ['off for a tool whose rule forbids it, even globally', `policy: { autoApprove: { global: true }, ${rules} }`, 'drop_table', 'C0OPS', false],
    ['off for a forbidden tool in a listed channel', `policy: { autoApprove: { channels: [C0AUTOMATION] }, ${rules} }`, 'drop_table', 'C0AUTOMATION', false],
    ['off when defaults forbid it', 'policy: { autoApprove: { global: true }, defaults: { autoApprove: forbidden } }', 'restart', 'C0OPS', false],
  ])('is %s', (_case, yamlText, toolName, channel, expected) => {
    const policy = policyOf(yamlText);
    const evaluation = evaluatePolicy({ policy, toolName, channel, input: {} });
    expect(isAutoApproveActive({ policy, channel, evaluation })).toBe(expected);
  });
});
