import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createJsonSchemaValidator } from '../../tools/json-schema-validator.js';
import { authorizeApprover } from './authorize-approver.js';
import { evaluatePolicy } from './evaluate-policy.js';

const policyOf = (yamlText: string) => parseConfigFile(yamlText, 'countersign.yml').policy;

// Input conditions lean to "met" for a list (any element) and for a value they cannot read (null,
// an object, text that is not a number). That is the safe side for `approval.when` and for a
// stricter `input:` rule, but for a laxer one "met" would mean nobody looks.
const LAX_INPUT_RULES = policyOf(`
policy:
  rules:
    - name: deleting pods needs SRE
      tools: ["k8s.delete_pods"]
      approvers: ["group:S0SRE"]
    - name: dev and staging are free
      tools: ["k8s.delete_pods"]
      input:
        - { field: namespaces, oneOf: [dev, staging] }
      approval: never
    - name: scaling needs SRE
      tools: ["k8s.scale"]
      approvers: ["group:S0SRE"]
    - name: small scale-ups are free
      tools: ["k8s.scale"]
      input:
        - { field: replicas, lessThanOrEqual: 3 }
      approval: never
    - name: image rollouts need SRE
      tools: [rollout]
      approvers: ["group:S0SRE"]
    - name: internal images are free
      tools: [rollout]
      input:
        - { field: containers.image, matches: "^registry\\\\.internal/" }
      approval: never
`);

// The MCP servers' own schemas, as ajv checks the model's input against them.
const deletePodsSchema = { type: 'object', properties: { namespaces: { type: 'array', items: { type: 'string' } }, selector: { type: 'string' } }, required: ['namespaces', 'selector'] };
const scaleSchema = { type: 'object', properties: { deployment: { type: 'string' }, replicas: { type: ['integer', 'string', 'null'] } }, required: ['deployment'] };

describe('evaluatePolicy with an input that may fall under several rules', () => {
  const validator = createJsonSchemaValidator();
  const evaluate = (toolName: string, input: unknown) => evaluatePolicy({ policy: LAX_INPUT_RULES, toolName, channel: 'C1', input });

  it('lets a laxer input rule decide an input it surely covers', () => {
    expect(evaluate('k8s.delete_pods', { namespaces: ['dev'], selector: 'app=api' })).toMatchObject({ needsApproval: false, rule: { name: 'dev and staging are free' } });
    expect(evaluate('k8s.delete_pods', { namespaces: ['dev', 'staging'], selector: 'app=api' })).toMatchObject({ needsApproval: false });
    expect(evaluate('k8s.delete_pods', { namespaces: ['prod'], selector: 'app=api' })).toMatchObject({ needsApproval: true, rule: { name: 'deleting pods needs SRE' } });
    expect(evaluate('k8s.scale', { deployment: 'api', replicas: 2 })).toMatchObject({ needsApproval: false, rule: { name: 'small scale-ups are free' } });
    expect(evaluate('k8s.scale', { deployment: 'api', replicas: '2' })).toMatchObject({ needsApproval: false });
  });

  it('sends a list that includes prod to SRE, not to the dev/staging rule', () => {
    const input = { namespaces: ['dev', 'prod'], selector: 'app=api' };
    expect(validator.validate(deletePodsSchema, input).success).toBe(true);
    expect(evaluate('k8s.delete_pods', input)).toMatchObject({ needsApproval: true, rule: { name: 'deleting pods needs SRE' } });
  });

  it.each([[null], ['50 please'], ['1e9x'], [[1, 50]]])('does not take replicas %j for a small scale-up', (replicas) => {
    const input = { deployment: 'api', replicas };
    if (!Array.isArray(replicas)) expect(validator.validate(scaleSchema, input).success).toBe(true);
    expect(evaluate('k8s.scale', input)).toMatchObject({ needsApproval: true, rule: { name: 'scaling needs SRE' } });
  });

  it('does not take a container without an image for an internal one', () => {
    const mixed = { containers: [{ image: 'registry.internal/api:1' }, { name: 'sidecar' }] };
    expect(evaluate('rollout', mixed)).toMatchObject({ needsApproval: true, rule: { name: 'image rollouts need SRE' } });
    const internal = { containers: [{ image: 'registry.internal/api:1' }, { image: 'registry.internal/proxy:2' }] };
    expect(evaluate('rollout', internal)).toMatchObject({ needsApproval: false, rule: { name: 'internal images are free' } });
  });

  it('still applies a stricter input rule to a list that may fall under it', () => {
    const policy = policyOf(`
policy:
  rules:
    - { name: restarts, tools: [restart_service] }
    - name: prod restarts need SRE leads
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: ["group:S0SRELEADS"]
      required: 2
`);
    for (const namespace of [['dev', 'prod'], null, { name: 'prod' }]) {
      expect(evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C1', input: { namespace } }).rule?.name).toBe('prod restarts need SRE leads');
    }
    expect(evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C1', input: { namespace: ['dev'] } }).rule?.name).toBe('restarts');
  });

  it('weighs the tool itself when no rule surely covers the input', () => {
    const policy = policyOf('policy:\n  rules: [{ tools: [prune], input: [{ field: namespace, equals: scratch }], approval: never }]\n');
    const evaluate = (input: unknown) => evaluatePolicy({ policy, toolName: 'prune', channel: 'C1', input, toolApproval: 'always' });
    expect(evaluate({ namespace: 'scratch' })).toMatchObject({ needsApproval: false, rule: { index: 0 } });
    expect(evaluate({ namespace: ['scratch', 'prod'] })).toMatchObject({ needsApproval: true, rule: undefined });
  });

  it("keeps the more specific rule when neither is stricter, and holds its approvers to the other rule's", () => {
    const policy = policyOf(`
policy:
  rules:
    - { name: restarts, tools: [restart_service], approvers: [U0ALICE, U0CAROL] }
    - { name: prod restarts, tools: [restart_service], input: [{ field: namespace, equals: prod }], approvers: [U0BOB, U0CAROL] }
`);
    const unclear = evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C1', input: { namespace: ['dev', 'prod'] } });
    expect(unclear).toMatchObject({ rule: { name: 'prod restarts' }, approvers: [{ kind: 'user', userId: 'U0BOB' }, { kind: 'user', userId: 'U0CAROL' }] });
    expect(unclear.alsoApprovers).toEqual([[{ kind: 'user', userId: 'U0ALICE' }, { kind: 'user', userId: 'U0CAROL' }]]);
    const mayApprove = (userId: string) => authorizeApprover({ evaluation: unclear, userId, requesterId: 'U0DAVE', groupMembers: new Map(), approvedBy: [] }).allowed;
    expect(['U0ALICE', 'U0BOB', 'U0CAROL'].filter(mayApprove)).toEqual(['U0CAROL']);
    expect(authorizeApprover({ evaluation: unclear, userId: 'U0BOB', requesterId: 'U0DAVE', groupMembers: new Map(), approvedBy: [] })).toMatchObject({
      code: 'not-eligible',
      reason: 'Only someone who is <@U0BOB> or <@U0CAROL> and also <@U0ALICE> or <@U0CAROL> can approve this',
    });
  });

  it('takes every limit and the approvers of the rule it may fall under as well', () => {
    const policy = policyOf(`
policy:
  rules:
    - name: deleting pods is SRE's
      tools: [delete_pods]
      approvers: [U0SRE]
      autoApprove: forbidden
      grants: forbidden
      expiry: 1h
    - name: dev deletes go to the dev lead
      tools: [delete_pods]
      input: [{ field: namespaces, oneOf: [dev] }]
      approvers: [U0DEVLEAD]
`);
    const evaluate = (namespaces: unknown) => evaluatePolicy({ policy, toolName: 'delete_pods', channel: 'C1', input: { namespaces, selector: 'app=api' } });
    const dev = evaluate(['dev']);
    expect(dev).toMatchObject({ rule: { name: 'dev deletes go to the dev lead' }, autoApprove: 'allowed', grants: 'allowed', expiryMs: 86_400_000 });
    for (const namespaces of [['dev', 'prod'], null, { name: 'dev' }]) {
      const unclear = evaluate(namespaces);
      expect(unclear).toMatchObject({ needsApproval: true, rule: { name: 'dev deletes go to the dev lead' }, approvers: [{ kind: 'user', userId: 'U0DEVLEAD' }] });
      expect(unclear.alsoApprovers).toEqual([[{ kind: 'user', userId: 'U0SRE' }]]);
      expect(unclear).toMatchObject({ autoApprove: 'forbidden', grants: 'forbidden', expiryMs: 3_600_000 });
      // No longer the dev rule's answer alone: a grant given under it does not cover this call.
      expect(unclear.rule?.fingerprint).not.toBe(dev.rule?.fingerprint);
    }
  });
});
