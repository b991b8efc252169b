import type { PolicyConfig, PolicyRule } from '../../config/policy-config-schema.js';
import { compileCondition, type InputTest } from './input-condition.js';
import { compileToolPattern, type ToolPattern } from './tool-pattern.js';

export interface CompiledRule {
  index: number;
  rule: PolicyRule;
  patterns: ToolPattern[];
  /** Whether this input needs approval under the rule's `approval`. */
  needsApproval: InputTest;
  /** Whether the rule applies to this input at all (its `input` conditions). */
  appliesTo: InputTest;
}

export interface CompiledPolicy {
  rules: CompiledRule[];
}

// Config objects live for the whole process, so each is compiled on first use and never again.
const compiledByPolicy = new WeakMap<PolicyConfig, CompiledPolicy>();

export function compilePolicy(policy: PolicyConfig): CompiledPolicy {
  let compiled = compiledByPolicy.get(policy);
  if (compiled === undefined) {
    compiled = { rules: policy.rules.map((rule, index) => compileRule(rule, index)) };
    compiledByPolicy.set(policy, compiled);
  }
  return compiled;
}

function compileRule(rule: PolicyRule, index: number): CompiledRule {
  const inputTests = (rule.input ?? []).map(compileCondition);
  return {
    index,
    rule,
    patterns: rule.tools.map(compileToolPattern),
    needsApproval: compileApproval(rule),
    appliesTo: (input) => inputTests.every((test) => test(input)),
  };
}

function compileApproval({ approval }: PolicyRule): InputTest {
  if (approval === 'always') return () => true;
  if (approval === 'never') return () => false;
  const tests = approval.when.map(compileCondition);
  return approval.match === 'any' ? (input) => tests.some((test) => test(input)) : (input) => tests.every((test) => test(input));
}
