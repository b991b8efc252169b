import { createHash } from 'node:crypto';
import { approverKey, type PolicyRule } from '../../config/policy-config-schema.js';
import { canonicalJson } from '../input-version.js';

/**
 * A rule's identity by what it says, not where it stands: a hash of its effective definition (tools,
 * channels, input conditions, approval, approvers, quorum, grant limits and every other setting,
 * inherited ones included). A grant keeps it, so after a deploy that inserts, reorders or edits rules
 * it covers calls only under the very rule its grantor approved under; `rules[2]` may be another rule
 * by then. Lists whose order means nothing are sorted, so reordering them in the file changes nothing.
 */
export function ruleFingerprint(rule: PolicyRule): string {
  return createHash('sha256').update(canonicalJson(normalisedRule(rule))).digest('base64url');
}

function normalisedRule(rule: PolicyRule): PolicyRule {
  return {
    ...rule,
    tools: sortedBy(rule.tools, String),
    ...(rule.channels === undefined ? {} : { channels: sortedBy(rule.channels, String) }),
    // Every input condition must hold, so their order is not part of the rule.
    ...(rule.input === undefined ? {} : { input: sortedBy(rule.input, canonicalJson) }),
    approvers: sortedBy(rule.approvers, approverKey),
  };
}

function sortedBy<ITEM>(items: readonly ITEM[], keyOf: (item: ITEM) => string): ITEM[] {
  return [...items].sort((left, right) => (keyOf(left) < keyOf(right) ? -1 : keyOf(left) > keyOf(right) ? 1 : 0));
}

/**
 * The identity of a rule's evaluation that other rules the input may fall under added to
 * (`underEveryRule`): the rule's fingerprint and what it ended with (limits and the other rules'
 * approvers), so it names neither the rule alone nor another combination.
 */
export function combinedFingerprint({ fingerprint, combination }: { fingerprint: string; combination: object }): string {
  return createHash('sha256').update(canonicalJson({ rule: fingerprint, combination })).digest('base64url');
}
