import { compilePolicy, type CompiledRule } from './compiled-policy.js';
import type { PolicyConfig } from '../../config/policy-config-schema.js';

/**
 * The rule that governs `toolName` in `channel`: the most specific one that matches.
 * 1. A rule limited to channels that include this one beats a rule for every channel, so a
 *    channel can be made stricter (or looser) than the rest of the workspace.
 * 2. Then a rule limited by `input` conditions (that this input meets) beats one for every input.
 * 3. Then the pattern with more literal characters: `restart_api` beats `restart_*` beats `*`.
 * 4. Then an exact name beats a glob with as many literals (`restart_*` also matches `restart_`).
 * 5. Then the rule written first. The config loader refuses rules that can never win this way.
 */
export function selectRule({
  policy,
  toolName,
  channel,
  input,
}: {
  policy: PolicyConfig;
  toolName: string;
  channel: string;
  input?: unknown;
}): CompiledRule | undefined {
  let best: { rule: CompiledRule; specificity: number[] } | undefined;
  for (const compiled of compilePolicy(policy).rules) {
    if (compiled.rule.input !== undefined && !compiled.appliesTo(input)) continue;
    const specificity = specificityOf({ compiled, toolName, channel });
    if (specificity !== undefined && (best === undefined || isMoreSpecific(specificity, best.specificity))) best = { rule: compiled, specificity };
  }
  return best?.rule;
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

// Strictly greater only: on a tie the earlier rule, already held, stays.
function isMoreSpecific(candidate: readonly number[], current: readonly number[]): boolean {
  for (let index = 0; index < candidate.length; index += 1) {
    const difference = (candidate[index] ?? 0) - (current[index] ?? 0);
    if (difference !== 0) return difference > 0;
  }
  return false;
}
