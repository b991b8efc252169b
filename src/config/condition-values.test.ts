import { describe, expect, it } from 'vitest';
import { parseConfigFile } from './config-file.js';
import { ConfigError } from './config-error.js';
import { evaluatePolicy } from '../approvals/policy/evaluate-policy.js';

/**
 * Reviewer's tests. f24ee1a refuses a condition whose field a command tool does not declare, since
 * such a condition never matches and the risky call then runs with no card (or under a laxer rule).
 * The same silent weakening comes from a condition the declared parameter can never meet, and the
 * loader accepts those: a value outside the parameter's enum, `equals: yes` on a boolean parameter
 * (YAML 1.2 reads `yes` as the text "yes", which a boolean input `true` never equals), and a dotted
 * path into a parameter that is a plain string (only the first segment is checked).
 */
function load(yaml: string): { config?: ReturnType<typeof parseConfigFile>; problems: string[] } {
  try {
    return { config: parseConfigFile(yaml, 'countersign.yml'), problems: [] };
  } catch (error) {
    if (ConfigError.isInstance(error)) return { problems: error.problems.map((problem) => `${problem.field}: ${problem.message}`) };
    throw error;
  }
}

const TOOL = `
tools:
  - name: deploy
    description: Deploy a service
    command: ["deploy", "{service}", "--env={namespace}", "--force={force}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      namespace: { type: string, enum: [staging, prod] }
      force: { type: boolean, default: false }
`;

describe('a policy condition the declared parameter can never meet', () => {
  it('refuses equals: yes on a boolean parameter (a forced deploy would run with no card)', () => {
    const { config, problems } = load(`${TOOL}
policy:
  rules:
    - tools: [deploy]
      approval: { when: [{ field: force, equals: yes }] }
`);
    if (config !== undefined) {
      const evaluation = evaluatePolicy({ policy: config.policy, toolName: 'deploy', channel: 'C0OPS', input: { service: 'api', namespace: 'prod', force: true } });
      // What the accepted config means: the forced deploy runs unasked.
      expect(evaluation.needsApproval).toBe(false);
    }
    expect(problems).toContainEqual(expect.stringContaining('policy.rules[0].approval.when[0].equals'));
  });

  it('refuses a value outside the parameter enum (production for enum [staging, prod])', () => {
    const { config, problems } = load(`${TOOL}
policy:
  rules:
    - { name: prod deploys, tools: [deploy], input: [{ field: namespace, equals: production }], approvers: ["group:S0SRE"], required: 2 }
    - { name: other deploys, tools: [deploy] }
`);
    if (config !== undefined) {
      const evaluation = evaluatePolicy({ policy: config.policy, toolName: 'deploy', channel: 'C0OPS', input: { service: 'api', namespace: 'prod', force: false } });
      // What the accepted config means: a prod deploy is approved by anyone in the channel, alone.
      expect({ rule: evaluation.rule?.name, required: evaluation.required }).toEqual({ rule: 'other deploys', required: 1 });
    }
    expect(problems).toContainEqual(expect.stringContaining('policy.rules[0].input[0].equals'));
  });

  it('refuses a dotted path into a string parameter (namespace.name never exists)', () => {
    const { config, problems } = load(`${TOOL}
policy:
  rules:
    - tools: [deploy]
      approval: { when: [{ field: namespace.name, equals: prod }] }
`);
    if (config !== undefined) {
      const evaluation = evaluatePolicy({ policy: config.policy, toolName: 'deploy', channel: 'C0OPS', input: { service: 'api', namespace: 'prod', force: false } });
      expect(evaluation.needsApproval).toBe(false);
    }
    expect(problems).toContainEqual(expect.stringContaining('policy.rules[0].approval.when[0].field'));
  });
});

const RANGES = `
http:
  bases: [{ url: "https://api.example.com/" }]
tools:
  - name: scale
    description: Scale a service
    command: ["scale", "{service}", "{replicas}", "--weight={weight}", "--force={force}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      replicas: { type: number, integer: true, maximum: 10 }
      weight: { type: number, minimum: 0.5, maximum: 1.5 }
      force: { type: boolean, default: false }
`;

function rules(conditions: string[], tool = 'scale'): string {
  return `${RANGES}
policy:
  rules:
    - tools: [${tool}]
      approval:
        match: any
        when:
${conditions.map((condition) => `          - ${condition}`).join('\n')}
`;
}

describe('every operator against what the field may hold', () => {
  it('names the value and what the parameter accepts, with a hint for YAML 1.1 booleans', () => {
    expect(load(rules(['{ field: force, equals: yes }'])).problems).toEqual([
      'countersign.yml policy.rules[0].approval.when[0].equals: is "yes", which scale\'s force never is: it accepts true or false (YAML reads yes as text, not true or false; write true or false); the condition would never match',
    ]);
    expect(load(`${TOOL}
policy:
  rules:
    - { tools: [deploy], input: [{ field: namespace, equals: production }] }
`).problems).toEqual(['countersign.yml policy.rules[0].input[0].equals: is "production", which deploy\'s namespace never is: it accepts one of staging, prod; the condition would never match']);
  });

  it('refuses each oneOf value no input can equal (a typo there lets that value run unasked)', () => {
    expect(load(`${TOOL}
policy:
  rules:
    - tools: [deploy]
      approval: { when: [{ field: namespace, oneOf: [prod, stagin] }, { field: force, oneOf: [true, "on"] }], match: any }
`).problems).toEqual([
      expect.stringContaining('policy.rules[0].approval.when[0].oneOf[1]: lists "stagin"'),
      expect.stringContaining('policy.rules[0].approval.when[1].oneOf[1]: lists "on"'),
    ]);
  });

  it('refuses matches that no enum or boolean value meets', () => {
    expect(load(`${TOOL}
policy:
  rules:
    - tools: [deploy]
      approval: { when: [{ field: namespace, matches: "production" }, { field: force, matches: "yes" }], match: any }
`).problems).toEqual([
      expect.stringContaining('policy.rules[0].approval.when[0].matches: is met by no value deploy\'s namespace may hold: it accepts one of staging, prod'),
      expect.stringContaining('policy.rules[0].approval.when[1].matches'),
    ]);
  });

  it('refuses number comparisons outside the range, values a number never prints as, and numbers on a boolean', () => {
    const { problems } = load(
      rules([
        '{ field: replicas, greaterThan: 10 }',
        '{ field: replicas, lessThan: 0 }', // {replicas} starts an argument, so it is never negative
        '{ field: replicas, equals: 2.5 }',
        '{ field: replicas, equals: "three" }',
        '{ field: weight, lessThanOrEqual: 0.4 }',
        '{ field: force, greaterThan: 0 }',
        '{ field: service, equals: "-all" }',
        '{ field: service, equals: API }',
      ]),
    );
    expect(problems.map((problem) => problem.split(':')[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((index) => `countersign.yml policy.rules[0].approval.when[${index}].${['greaterThan', 'lessThan', 'equals', 'equals', 'lessThanOrEqual', 'greaterThan', 'equals', 'equals'][index]}`));
    expect(problems[1]).toContain('it accepts a whole number from 0 to 10');
    expect(problems[6]).toContain('it accepts text matching [a-z0-9-]+, not starting with -');
  });

  it('accepts every condition some value meets, as the evaluator compares them', () => {
    expect(
      load(
        rules([
          '{ field: force, equals: true }',
          '{ field: force, equals: "true" }',
          '{ field: replicas, greaterThan: 9.5 }',
          '{ field: replicas, equals: "3" }',
          '{ field: replicas, lessThanOrEqual: 0 }',
          '{ field: weight, greaterThan: 1.4 }',
          '{ field: service, equals: api }',
          '{ field: service, equals: 8080 }', // text equals a number when it reads as that number
          '{ field: service, matches: "x" }', // free text: a pattern cannot be judged here
          '{ field: service, greaterThan: 3 }',
        ]),
      ).problems,
    ).toEqual([]);
  });

  it('checks the fields of http_request: the method list, and no path into the url or the body', () => {
    expect(load(rules(['{ field: method, equals: delete }', '{ field: method, equals: DELETE }', '{ field: url.host, equals: x }', '{ field: body.replicas, equals: 3 }', '{ field: headers.X-Env, equals: prod }', '{ field: url, matches: "prod" }'], 'http_request')).problems).toEqual([
      expect.stringContaining('policy.rules[0].approval.when[0].equals: is "delete", which http_request\'s method never is: it accepts one of GET, HEAD, POST, PUT, PATCH, DELETE (upper case)'),
      expect.stringContaining('policy.rules[0].approval.when[2].field: reads host inside url'),
      expect.stringContaining('policy.rules[0].approval.when[3].field: reads replicas inside body'),
    ]);
  });

  it('says nothing where the config cannot know the field (MCP tools, globs, a rule mixing them with command tools)', () => {
    const mcp = 'mcpServers:\n  ops:\n    command: ops-mcp\n';
    for (const tools of ['ops.deploy', 'dep*', 'deploy, ops.deploy']) {
      expect(load(`${TOOL}${mcp}
policy:
  rules:
    - tools: [${tools}]
      approval: { when: [{ field: force, equals: yes }] }
`).problems).toEqual([]);
    }
  });
});
