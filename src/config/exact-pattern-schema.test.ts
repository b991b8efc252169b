import { describe, expect, it } from 'vitest';
import { interruptIfStuck } from '../../test/helpers/interrupt-if-stuck.js';
import { evaluatePolicy } from '../approvals/policy/evaluate-policy.js';
import { createCommandTool } from '../tools/command/command-tool.js';
import { problemsOf } from './config-problems.test-support.js';
import { parseConfigFile } from './config-file.js';

// "Lowercase words joined by optional dashes": a nested quantifier that backtracking engines take
// exponential time on (about 3 s at 28 characters, hours at 35). The model chooses the text.
const CATASTROPHIC = `
tools:
  - name: restart_service
    description: Restart a service
    command: ["systemctl", "restart", "{service}"]
    parameters:
      service: { type: string, pattern: "([a-z0-9]+-?)*", maxLength: 63 }
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approval: never
    - name: prod services need SRE
      tools: [restart_service]
      input:
        - { field: service, matches: "^([a-z0-9]+-?)*-prod$" }
      approvers: ["group:S0SRE"]
`;

describe('operator patterns on the model input', () => {
  const config = parseConfigFile(CATASTROPHIC, 'countersign.yml');
  const tool = createCommandTool(config.tools[0]!);
  // Far past the point where a backtracking engine would run for longer than the universe has.
  const hostile = `${'a'.repeat(2_000)}!`;

  it("checks a parameter's pattern on hostile text to the end", () => {
    expect(interruptIfStuck(() => tool.inputSchema.safeParse({ service: hostile }).success)).toBe(false);
    expect(interruptIfStuck(() => tool.inputSchema.safeParse({ service: 'api-gateway' }).success)).toBe(true);
    expect(tool.inputSchema.safeParse({ service: 'api_gateway' }).success).toBe(false);
  });

  it('evaluates a policy `matches` condition on hostile text to the end', () => {
    const ruleFor = (service: string) => interruptIfStuck(() => evaluatePolicy({ policy: config.policy, toolName: 'restart_service', channel: 'C1', input: { service } })).rule?.name;
    expect(ruleFor(hostile)).toBe('restarts');
    expect(ruleFor(`${'a'.repeat(2_000)}-prod`)).toBe('prod services need SRE');
    expect(ruleFor('api-staging')).toBe('restarts');
  });
});

describe('operator patterns the linear-time engine cannot run', () => {
  const withParameterPattern = (pattern: string) =>
    `tools:\n  - name: restart_service\n    description: d\n    command: ["systemctl", "restart", "{service}"]\n    parameters:\n      service: { type: string, pattern: ${JSON.stringify(pattern)} }\n`;

  it.each([
    ['a lookahead', '(?!canary-)[a-z-]+', /lookahead/],
    ['a lookbehind', '[a-z]+(?<!-)', /lookbehind/],
    ['a backreference', '([a-z])\\1', /backreferences/],
    ['a named backreference', '(?<c>[a-z])\\k<c>', /backreference/],
    ['\\S inside a class', '[\\S-]+', /\\S inside a character class/],
  ])('refuses %s in a parameter pattern at load, naming the field', (_case, pattern, reason) => {
    expect(problemsOf(withParameterPattern(pattern))).toEqual([{ field: 'countersign.yml tools[0].parameters.service.pattern', message: expect.stringMatching(reason) }]);
  });

  it('refuses a lookahead in a policy condition at load, naming the field', () => {
    const yamlText = 'policy:\n  rules:\n    - { tools: [a], input: [{ field: service, matches: "^(?!canary-)" }] }\n';
    expect(problemsOf(yamlText)).toEqual([{ field: 'countersign.yml policy.rules[0].input[0].matches', message: expect.stringMatching(/lookahead/) }]);
  });

  it('keeps JavaScript whitespace in \\s, which RE2 alone reads as ASCII', () => {
    const config = parseConfigFile(`${withParameterPattern('\\S+')}policy:\n  rules:\n    - { tools: [restart_service], input: [{ field: service, matches: "\\\\s" }] }\n`, 'countersign.yml');
    const tool = createCommandTool(config.tools[0]!);
    expect(tool.inputSchema.safeParse({ service: 'api\u00a0gateway' }).success).toBe(false);
    expect(evaluatePolicy({ policy: config.policy, toolName: 'restart_service', channel: 'C1', input: { service: 'api\u00a0gateway' } }).rule).toMatchObject({ index: 0 });
  });
});
