import type { ApproverSpec, PolicyConfig, PolicySettings } from '../../config/policy-config-schema.js';
import type { CompiledRule } from './compiled-policy.js';
import { selectRules } from './select-rule.js';
import { underEveryRule } from './every-rule.js';
import { strictestEvaluation } from './strictest-evaluation.js';

export type { ApproverSpec } from '../../config/policy-config-schema.js';

/**
 * What the policy says about one proposed call. Plain data, so it can be stored with the pending
 * call and every later click is judged by the rule that was shown on the card, not by a config
 * that changed in between.
 */
export interface PolicyEvaluation extends PolicySettings {
  /**
   * The governing rule (its position in `policy.rules`), or undefined when no rule covers the tool.
   * `fingerprint` names it by content (see `ruleFingerprint`); evaluations stored before it was
   * recorded lack it.
   */
  rule: { index: number; name?: string; fingerprint?: string } | undefined;
  needsApproval: boolean;
  /**
   * Approvers (as `approverKey`s) that hops of an escalation ladder added to `approvers`, beyond
   * the rule's own: a grant carries the rule's own approvers only (see `withoutEscalation`).
   */
  escalatedApprovers?: string[];
  /**
   * For an input that may fall under several rules that ask for approval: the approvers of the
   * others, each list one rule's (`underEveryRule`). A person must be among `approvers` AND among
   * each of these (`approverEligibility`); the hops of a ladder add to `approvers` only, so they
   * never widen past another rule. Absent for an input under one rule.
   */
  alsoApprovers?: ApproverSpec[][];
}

/** A tool's own static rule; evaluate a function rule first and pass its answer as one of these. */
export type ToolApproval = 'always' | 'never';

/**
 * Precedence, strictest owner first:
 * 1. The most specific matching policy rule (see `selectRules`) decides, overriding the tool's own
 *    `approval`: the operator's config outranks what a tool author assumed, in both directions.
 * 2. No rule covers the tool: its own rule decides (`never` runs it unasked, `always` asks).
 * 3. Neither: approval is needed. Unknown and MCP tools fail closed.
 * Approvers, quorum, expiry and the rest come from the rule, or from `policy.defaults` when no
 * rule covers the tool. An input that may fall under several of these (a list with prod and dev
 * against a rule for dev) must meet every one of them (`underEveryRule`), never a laxer one alone
 * because it comes first.
 */
export function evaluatePolicy({
  policy,
  toolName,
  channel,
  input,
  toolApproval,
}: {
  policy: PolicyConfig;
  toolName: string;
  channel: string;
  /** The input after the tool's schema applied defaults; see `input-condition.ts`. */
  input: unknown;
  toolApproval?: ToolApproval | undefined;
}): PolicyEvaluation {
  const { rules, settled } = selectRules({ policy, toolName, channel, input });
  const evaluations = rules.map((rule) => evaluateRule(rule, input));
  if (!settled) evaluations.push({ rule: undefined, needsApproval: toolApproval !== 'never', ...settingsOf(policy.defaults) });
  const [first, ...rest] = evaluations;
  if (first === undefined) throw new Error('unreachable: an unsettled selection ends with the no-rule evaluation');
  return underEveryRule({ chosen: strictestEvaluation([first, ...rest]), candidates: evaluations });
}

function evaluateRule({ rule, index, fingerprint, needsApproval }: CompiledRule, input: unknown): PolicyEvaluation {
  return {
    rule: rule.name === undefined ? { index, fingerprint } : { index, name: rule.name, fingerprint },
    needsApproval: needsApproval(input),
    ...settingsOf(rule),
  };
}

// Copies, so a caller that stores or edits an evaluation cannot reach into the shared config.
function settingsOf(settings: PolicySettings): Omit<PolicyEvaluation, 'rule' | 'needsApproval'> {
  const { approvers, required, allowSelfApproval, expiryMs, reminderMs, onExpiry, autoApprove, grants, notify, escalation } = settings;
  return {
    approvers: approvers.map((approver) => ({ ...approver })),
    required,
    allowSelfApproval,
    expiryMs,
    ...(reminderMs === undefined ? {} : { reminderMs }),
    onExpiry,
    autoApprove,
    grants,
    ...(notify === undefined ? {} : { notify: { ...notify, channels: [...notify.channels] } }),
    ...(escalation === undefined ? {} : { escalation: structuredClone(escalation) }),
  };
}
