import type { PolicyEvaluation } from './evaluate-policy.js';

/** A rule as dashboards name it: its name, else its place (`rules[2]`), else `defaults` when no rule covered the call. */
export function ruleLabel(evaluation: Pick<PolicyEvaluation, 'rule'> | undefined): string {
  const rule = evaluation?.rule;
  if (rule === undefined) return 'defaults';
  return rule.name ?? `rules[${rule.index}]`;
}
