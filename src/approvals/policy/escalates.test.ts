import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { escalates } from './escalates.js';
import { evaluatePolicy } from './evaluate-policy.js';

const policy = parseConfigFile(
  `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approval: { when: [{ field: namespace, oneOf: [staging, prod] }] }
      approvers: ["group:S0ONCALL"]
    - name: prod restarts
      tools: [restart_service]
      channels: [C0OPS]
      approval: { when: [{ field: namespace, equals: prod }] }
      approvers: ["group:S0ONCALL"]
      required: 2
    - name: scaling
      tools: [scale_deployment]
      approval: { when: [{ field: replicas, greaterThan: 10 }] }
      approvers: [requester]
    - name: deletes
      tools: [delete_pod]
      approval: { when: [{ field: namespace, equals: prod }] }
      approvers: ["group:S0DBA"]
    - name: staging deletes
      tools: [delete_pod]
      channels: [C0OPS]
      approval: { when: [{ field: namespace, equals: staging }] }
      approvers: ["group:S0ONCALL"]
      allowSelfApproval: true
`,
  'countersign.yml',
).policy;

const evaluate = (toolName: string, channel: string, input: unknown) => evaluatePolicy({ policy, toolName, channel, input });

describe('escalates', () => {
  it.each([
    ['an edit that now needs approval', evaluate('scale_deployment', 'C1', { replicas: 2 }), evaluate('scale_deployment', 'C1', { replicas: 20 }), true],
    ['an edit that no longer needs approval', evaluate('scale_deployment', 'C1', { replicas: 20 }), evaluate('scale_deployment', 'C1', { replicas: 2 }), false],
    ['an edit that still needs none', evaluate('scale_deployment', 'C1', { replicas: 1 }), evaluate('scale_deployment', 'C1', { replicas: 2 }), false],
    ['an edit under the same rule', evaluate('restart_service', 'C1', { namespace: 'staging' }), evaluate('restart_service', 'C1', { namespace: 'prod' }), false],
    ['more approvers needed', evaluate('restart_service', 'C1', { namespace: 'prod' }), evaluate('restart_service', 'C0OPS', { namespace: 'prod' }), true],
    ['fewer approvers needed', evaluate('restart_service', 'C0OPS', { namespace: 'prod' }), evaluate('restart_service', 'C1', { namespace: 'prod' }), false],
    ['other approvers', evaluate('delete_pod', 'C1', { namespace: 'prod' }), evaluate('restart_service', 'C1', { namespace: 'prod' }), true],
    ['self-approval taken away', evaluate('delete_pod', 'C0OPS', { namespace: 'staging' }), evaluate('restart_service', 'C1', { namespace: 'prod' }), true],
    ['self-approval given', evaluate('restart_service', 'C1', { namespace: 'prod' }), evaluate('delete_pod', 'C0OPS', { namespace: 'staging' }), false],
  ])('%s → %s', (_case, before, after, expected) => {
    expect(escalates({ before, after })).toBe(expected);
  });
});

describe('escalates: an input that may fall under several rules', () => {
  const alone = evaluatePolicy({
    policy: parseConfigFile('policy:\n  defaults:\n    approvers: [U0DEVLEAD]\n', 'countersign.yml').policy,
    toolName: 'delete_pods',
    channel: 'C1',
    input: {},
  });

  it("counts the other rules' approvers: the same approvers held to another rule's too are other approvers", () => {
    const combined = { ...alone, alsoApprovers: [[{ kind: 'user' as const, userId: 'U0SRE' }]] };
    expect(escalates({ before: alone, after: combined })).toBe(true);
    expect(escalates({ before: combined, after: { ...alone, alsoApprovers: [[{ kind: 'user' as const, userId: 'U0SRE2' }]] } })).toBe(true);
    expect(escalates({ before: combined, after: structuredClone(combined) })).toBe(false);
  });
});
