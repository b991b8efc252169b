import { describe, expect, it } from 'vitest';
import { parseConfigFile } from './config-file.js';
import { ConfigError } from './config-error.js';

/**
 * Reviewer's test (review G). 51f860b refuses a condition "no value of the field could meet",
 * checking each condition against each tool of the rule on its own. A rule naming two command tools
 * whose enums differ (restart's namespace is staging|prod, scale's is staging|production) with one
 * `oneOf` covering both spellings is met by both tools' prod inputs: the condition is meetable for the
 * rule, and the rule works today. The check refuses it anyway (prod is not in scale's enum,
 * production not in restart's), so a deployment with such a rule stops at upgrade, and no single
 * oneOf can be written for the two tools: only splitting the rule loads.
 */
const CONFIG = `
tools:
  - name: restart
    description: Restart a service
    command: ["restart", "{service}", "--namespace={namespace}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      namespace: { type: string, enum: [staging, prod] }
  - name: scale
    description: Scale a service
    command: ["scale", "{service}", "--namespace={namespace}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      namespace: { type: string, enum: [staging, production] }
policy:
  rules:
    - name: prod changes
      tools: [restart, scale]
      input: [{ field: namespace, oneOf: [prod, production] }]
      approvers: ["group:S0SRE"]
    - name: other changes
      tools: [restart, scale]
`;

function problemsOf(yaml: string): string[] {
  try {
    parseConfigFile(yaml, 'countersign.yml');
    return [];
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems.map((problem) => `${problem.field}: ${problem.message}`);
    throw error;
  }
}

describe('a oneOf on a rule naming several command tools', () => {
  it('loads when each value is one some tool of the rule may hold', () => {
    expect(problemsOf(CONFIG)).toEqual([]);
  });

  it('refuses a value no tool of the rule may hold, with what each tool accepts', () => {
    expect(problemsOf(CONFIG.replace('oneOf: [prod, production]', 'oneOf: [prod, prd]'))).toEqual([
      'countersign.yml policy.rules[0].input[0].oneOf[1]: lists "prd", which restart\'s namespace never is: it accepts one of staging, prod; the condition would never match',
      'countersign.yml policy.rules[0].input[0].oneOf[1]: lists "prd", which scale\'s namespace never is: it accepts one of staging, production; the condition would never match',
    ]);
  });
});

describe('a whole condition on a rule naming several command tools', () => {
  it('loads when some tool of the rule can meet it (production: scale)', () => {
    expect(problemsOf(CONFIG.replace('oneOf: [prod, production]', 'equals: production'))).toEqual([]);
  });

  it('is refused when none of them can', () => {
    expect(problemsOf(CONFIG.replace('oneOf: [prod, production]', 'equals: prd'))).toEqual([
      'countersign.yml policy.rules[0].input[0].equals: is "prd", which restart\'s namespace never is: it accepts one of staging, prod; the condition would never match',
      'countersign.yml policy.rules[0].input[0].equals: is "prd", which scale\'s namespace never is: it accepts one of staging, production; the condition would never match',
    ]);
    expect(problemsOf(CONFIG.replace('field: namespace, oneOf: [prod, production]', 'field: namespace.name, equals: prod'))).toEqual([
      expect.stringContaining('policy.rules[0].input[0].field: reads name inside namespace, but restart\'s namespace'),
      expect.stringContaining('policy.rules[0].input[0].field: reads name inside namespace, but scale\'s namespace'),
    ]);
  });
});
