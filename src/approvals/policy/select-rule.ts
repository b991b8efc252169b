import { compilePolicy, type CompiledRule } from './compiled-policy.js';
import type { PolicyConfig } from '../../config/policy-config-schema.js';

export interface RuleCandidates {
  /** The rules that may govern the call, most specific first (see `selectRules`). */
  rules: CompiledRule[];
  /** Whether the last of them surely governs it; otherwise "no rule" is a candidate too. */
  settled: boolean;
}

/**
 * The rules that may govern `toolName` in `channel`, in precedence order, most specific first:
 * 1. A rule limited to channels that include this one beats a rule for every channel, so a
 *    channel can be made stricter (or looser) than the rest of the workspace.
 * 2. Then a rule limited by `input` conditions (that this input meets) beats one for every input.
 * 3. Then the pattern with more literal characters: `restart_api` beats `restart_*` beats `*`.
 * 4. Then an exact name beats a glob with as many literals (`restart_*` also matches `restart_`).
 * 5. Then the rule written first. The config loader refuses rules that can never win this way.
 * For a clear input the first rule that matches is the only candidate. An input that only may
 * meet a rule's conditions (a list with prod and dev, null, text that is not a number) may fall
 * under it or under the next, so the list runs on to the first rule it surely falls under, and
 * the caller takes the strictest of them.
 */
export function selectRules({
  policy,
  toolName,
  channel,
  input,
}: {
  policy: PolicyConfig;
  toolName: string;
  channel: string;
  input?: unknown;
}): RuleCandidates {
  const matching: { rule: CompiledRule; specificity: number[] }[] = [];
  for (const compiled of compilePolicy(policy).rules) {
    const specificity = specificityOf({ compiled, toolName, channel });
    if (specificity !== undefined) matching.push({ rule: compiled, specificity });
  }
  // Stable, so rules as specific as each other stay in file order.
  matching.sort((left, right) => compareSpecificity(right.specificity, left.specificity));

  const rules: CompiledRule[] = [];
  for (const { rule } of matching) {
    const applies = rule.appliesTo(input);
    if (applies === 'unmet') continue;
    rules.push(rule);
    if (applies === 'met') return { rules, settled: true };
  }
  return { rules, settled: false };
}

function specificityOf({ compiled, toolName, channel }: { compiled: CompiledRule; toolName: string; channel: string }): number[] | undefined {
  const { channels } = compiled.rule;
  if (channels !== undefined && !channels.includes(channel)) return undefined;
  const matching = compiled.patterns.filter((pattern) => pattern.matches(toolName));
  if (matching.length === 0) return undefined;
  const literalCharacters = Math.max(...matching.map((pattern) => pattern.literalCharacters));
  const exact = matching.some((pattern) => pattern.exact);
  return [channels === undefined ? 0 : 1, compiled.rule.input === undefined ? 0 : 1, literalCharacters, exact ? 1 : 0];
}

function compareSpecificity(left: readonly number[], right: readonly number[]): number {
  for (let index = 0; index < left.length; index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
