import type { PolicyConfig, PolicyRule } from '../../config/policy-config-schema.js';
import { compileCondition, compileConditionOutcome, type InputCondition, type InputTest } from './input-condition.js';
import { ruleFingerprint } from './rule-fingerprint.js';
import { compileToolPattern, type ToolPattern } from './tool-pattern.js';

export interface CompiledRule {
  index: number;
  rule: PolicyRule;
  /** The rule's identity by content (see `ruleFingerprint`), which a grant is bound to. */
  fingerprint: string;
  patterns: ToolPattern[];
  /** Whether this input needs approval under the rule's `approval`. */
  needsApproval: InputTest;
  /** Whether the rule applies to this input at all (its `input` conditions; met when it has none). */
  appliesTo: InputCondition;
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
  const inputConditions = (rule.input ?? []).map(compileConditionOutcome);
  return {
    index,
    rule,
    fingerprint: ruleFingerprint(rule),
    patterns: rule.tools.map(compileToolPattern),
    needsApproval: compileApproval(rule),
    appliesTo: (input) => {
      const outcomes = inputConditions.map((condition) => condition(input));
      // Every condition must hold: one unmet settles it, even when another is unclear.
      if (outcomes.includes('unmet')) return 'unmet';
      return outcomes.includes('unclear') ? 'unclear' : 'met';
    },
  };
}

function compileApproval({ approval }: PolicyRule): InputTest {
  if (approval === 'always') return () => true;
  if (approval === 'never') return () => false;
  const tests = approval.when.map(compileCondition);
  return approval.match === 'any' ? (input) => tests.some((test) => test(input)) : (input) => tests.every((test) => test(input));
}
