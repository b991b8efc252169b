import { z } from 'zod';
import { toolPatternCovers, toolPatternsMayOverlap } from '../approvals/policy/tool-pattern-covers.js';
import { compileToolPattern } from '../approvals/policy/tool-pattern.js';
import { DURATION_HINT, formatDuration, parseDuration } from './duration.js';
import { exactPatternSchema } from './exact-pattern-schema.js';

/**
 * The `policy:` section of `countersign.yml`: who may approve which tool calls, when a call needs
 * approval at all, and for how long a card stays open. It is resolved at load time: every rule
 * carries its effective settings (its own, else `defaults`, else the built-ins; self-approval, which
 * follows the approvers, is the stricter of theirs and an explicit default, see selfApprovalOf), so
 * what the bot enforces is what `parseConfigFile` returns, and contradictions surface at start-up.
 */

/** Who may countersign. `channel` (anyone who can see the card) is the default. */
export type ApproverSpec =
  | { kind: 'user'; userId: string }
  | { kind: 'group'; groupId: string }
  | { kind: 'requester' }
  | { kind: 'channel' };

export type ConditionValue = string | number | boolean;
export type NumericComparison = 'greaterThan' | 'greaterThanOrEqual' | 'lessThan' | 'lessThanOrEqual';

/** One test on the tool input; `field` is a dotted path such as `spec.namespace`. */
export type PolicyCondition =
  | { field: string; operator: 'equals'; value: ConditionValue }
  | { field: string; operator: 'oneOf'; values: ConditionValue[] }
  | { field: string; operator: 'matches'; pattern: string }
  | { field: string; operator: NumericComparison; value: number };

export type PolicyApproval = 'always' | 'never' | { when: PolicyCondition[]; match: 'all' | 'any' };

/**
 * What happens when nobody decides in time. `stop`: the call does not run and the turn ends, so
 * the agent does not carry on as if someone had said no. `continue`: the model is told the request
 * expired (not that it was denied) and the turn goes on.
 */
export type ExpiryOutcome = 'stop' | 'continue';
export type AutoApprovePermission = 'allowed' | 'forbidden';
/** `identicalArguments`: a grant may only cover calls with exactly the approved input. */
export type GrantPermission = 'allowed' | 'identicalArguments' | 'forbidden';

/**
 * Where a rule's card goes, apart from who may approve it. Copies outside the thread are linked
 * to it and show the same state; a click on any copy is judged as if made in the thread.
 */
export interface CardRouting {
  /** The card in the thread that asked (default). When false the thread shows it without buttons. */
  thread: boolean;
  /** Channel ids that get a copy, e.g. an #approvals channel. */
  channels: string[];
  /** A copy in a DM to each approver the rule names by user id. */
  dmApprovers: boolean;
}

/**
 * One hop of an escalation ladder, `afterMs` from the request: remind the approvers, and/or let
 * fallback approvers (users or groups) decide too and tell them so. Expiry stays the last step.
 */
export interface EscalationStage {
  afterMs: number;
  remind: boolean;
  /** Users and groups who may approve from this hop on, in addition to the rule's approvers. */
  addApprovers: Extract<ApproverSpec, { kind: 'user' | 'group' }>[];
}

export interface PolicySettings {
  approvers: ApproverSpec[];
  /** Distinct approvers needed. */
  required: number;
  allowSelfApproval: boolean;
  expiryMs: number;
  /** How long BEFORE expiry to remind the approvers; absent means no reminder. */
  reminderMs?: number;
  onExpiry: ExpiryOutcome;
  autoApprove: AutoApprovePermission;
  grants: GrantPermission;
  /** Absent: the card goes to the thread only. */
  notify?: CardRouting;
  /** Hops before expiry, in time order; absent or empty: none. */
  escalation?: EscalationStage[];
}

export interface PolicyRule extends PolicySettings {
  /** A label for cards and audit; unique when given. */
  name?: string;
  /** Tool names or globs: `*` stays within one `.`-separated part, `**` spans parts, `?` is one character. */
  tools: string[];
  /** When given, the rule applies only in these channels. */
  channels?: string[];
  /**
   * When given, the rule applies only to inputs meeting every condition, so approvers can depend on
   * the input (prod restarts need the SRE leads; other restarts anyone in the channel). An edit that
   * moves a call under a stricter rule is caught as an escalation.
   */
  input?: PolicyCondition[];
  approval: PolicyApproval;
}

export interface AutoApproveConfig {
  global: boolean;
  channels: string[];
}

export interface PolicyConfig {
  autoApprove: AutoApproveConfig;
  /** Effective settings for tools no rule covers (rules already include what they inherit). */
  defaults: PolicySettings;
  rules: PolicyRule[];
}

export const DEFAULT_EXPIRY_MS = 24 * 3_600_000;
export const MIN_EXPIRY_MS = 60_000;
export const MAX_EXPIRY_MS = 30 * 86_400_000;
export const MAX_REQUIRED_APPROVERS = 10;

const USER_ID_PATTERN = /^[UW][A-Z0-9]{2,}$/;
const GROUP_PATTERN = /^group:(S[A-Z0-9]{2,})$/;
const CHANNEL_ID_PATTERN = /^[CGD][A-Z0-9]{2,}$/;
const TOOL_PATTERN_PATTERN = /^[A-Za-z0-9_.*?-]+$/;
const FIELD_PATH_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const NUMERIC_COMPARISONS = ['greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual'] as const;
const OPERATORS = ['equals', 'oneOf', 'matches', ...NUMERIC_COMPARISONS] as const;

const nullAsAbsent = (value: unknown) => (value === null ? undefined : value);

export function uniqueList<ITEM extends z.ZodType>(item: ITEM, keyOf: (value: z.output<ITEM>) => string = String) {
  return z.array(item).superRefine((values, context) => {
    const seen = new Set<string>();
    values.forEach((value, index) => {
      const key = keyOf(value);
      if (seen.has(key)) context.addIssue({ code: 'custom', path: [index], message: `lists ${key} more than once` });
      seen.add(key);
    });
  });
}

export const channelIdSchema = z.string().regex(CHANNEL_ID_PATTERN, { error: 'must be a Slack channel id such as C0123ABCD, not a #name' });

const durationSchema = z.string({ error: DURATION_HINT }).transform((text, context) => {
  const milliseconds = parseDuration(text);
  if (milliseconds === undefined) context.addIssue({ code: 'custom', message: DURATION_HINT });
  else if (milliseconds < MIN_EXPIRY_MS || milliseconds > MAX_EXPIRY_MS) context.addIssue({ code: 'custom', message: 'must be between 1m and 30d' });
  else return milliseconds;
  return z.NEVER;
});

// `none` switches off a reminder inherited from `defaults`.
const reminderSchema = z.string({ error: `${DURATION_HINT}, or none` }).transform((text, context): number | 'none' => {
  if (text.trim() === 'none') return 'none';
  const milliseconds = parseDuration(text);
  if (milliseconds !== undefined) return milliseconds;
  context.addIssue({ code: 'custom', message: `${DURATION_HINT}, or none` });
  return z.NEVER;
});

const approverSchema = z.string({ error: 'must be a Slack user id, group:<usergroup id>, requester or channel' }).transform((text, context): ApproverSpec => {
  if (text === 'requester') return { kind: 'requester' };
  if (text === 'channel') return { kind: 'channel' };
  const group = GROUP_PATTERN.exec(text);
  if (group?.[1] !== undefined) return { kind: 'group', groupId: group[1] };
  if (USER_ID_PATTERN.test(text)) return { kind: 'user', userId: text };
  const hint = text.startsWith('S') ? ` (write group:${text} for a user group)` : text.startsWith('@') ? ' (use the user id, not the @name)' : '';
  context.addIssue({ code: 'custom', message: `must be a Slack user id (U… or W…), group:<usergroup id> (S…), requester or channel${hint}` });
  return z.NEVER;
});

const approversSchema = uniqueList(approverSchema, approverKey)
  .min(1, 'must name at least one approver; leave it out to let anyone in the channel approve')
  .superRefine((approvers, context) => {
    const channelIndex = approvers.findIndex((approver) => approver.kind === 'channel');
    if (channelIndex >= 0 && approvers.length > 1) {
      context.addIssue({ code: 'custom', path: [channelIndex], message: 'already lets anyone in the channel approve; list it alone' });
    }
  });

const notifySchema = z.strictObject({
  thread: z.boolean({ error: 'must be true or false' }).optional(),
  channels: uniqueList(channelIdSchema).min(1, 'must list at least one channel id; leave it out to post no channel copy').optional(),
  dmApprovers: z.boolean({ error: 'must be true or false' }).optional(),
});

const escalationStageSchema = z
  .strictObject({
    after: durationSchema,
    remind: z.boolean({ error: 'must be true or false' }).optional(),
    addApprovers: uniqueList(approverSchema, approverKey).min(1, 'must name at least one user or group; leave it out to only remind').optional(),
  })
  .superRefine((stage, context) => {
    if (!stage.remind && stage.addApprovers === undefined) context.addIssue({ code: 'custom', message: 'does nothing: set remind: true and/or addApprovers' });
    stage.addApprovers?.forEach((approver, index) => {
      if (approver.kind !== 'user' && approver.kind !== 'group') {
        context.addIssue({ code: 'custom', path: ['addApprovers', index], message: `must be a user id or group:<usergroup id>, not ${approver.kind}` });
      }
    });
  })
  .transform(
    (stage): EscalationStage => ({
      afterMs: stage.after,
      remind: stage.remind ?? false,
      addApprovers: (stage.addApprovers ?? []).filter((approver): approver is EscalationStage['addApprovers'][number] => approver.kind === 'user' || approver.kind === 'group'),
    }),
  );

const settingsShape = {
  approvers: approversSchema.optional(),
  required: z.int().min(1).max(MAX_REQUIRED_APPROVERS).optional(),
  allowSelfApproval: z.boolean().optional(),
  expiry: durationSchema.optional(),
  reminder: reminderSchema.optional(),
  onExpiry: z.enum(['stop', 'continue']).optional(),
  autoApprove: z.enum(['allowed', 'forbidden']).optional(),
  grants: z.enum(['allowed', 'identicalArguments', 'forbidden']).optional(),
  notify: notifySchema.optional(),
  escalation: z.array(escalationStageSchema).optional(),
};
const SETTING_KEYS = Object.keys(settingsShape) as (keyof typeof settingsShape)[];

const conditionValueSchema = z.union([z.string(), z.number(), z.boolean()], { error: 'must be text, a number or true/false' });

const conditionSchema = z
  .strictObject({
    field: z.string().regex(FIELD_PATH_PATTERN, { error: 'must be a dotted path into the tool input, e.g. spec.namespace' }),
    equals: conditionValueSchema.optional(),
    oneOf: uniqueList(conditionValueSchema).min(1, 'must list at least one value').optional(),
    matches: exactPatternSchema.optional(),
    greaterThan: z.number().optional(),
    greaterThanOrEqual: z.number().optional(),
    lessThan: z.number().optional(),
    lessThanOrEqual: z.number().optional(),
  })
  .superRefine((condition, context) => {
    const present = OPERATORS.filter((operator) => condition[operator] !== undefined);
    if (present.length === 0) context.addIssue({ code: 'custom', message: `needs one of ${OPERATORS.join(', ')}` });
    for (const extra of present.slice(1)) {
      context.addIssue({ code: 'custom', path: [extra], message: `use one comparison per condition (this one already has ${present[0]}); add another condition to combine them` });
    }
  })
  .transform((condition): PolicyCondition => {
    const { field } = condition;
    if (condition.equals !== undefined) return { field, operator: 'equals', value: condition.equals };
    if (condition.oneOf !== undefined) return { field, operator: 'oneOf', values: condition.oneOf };
    if (condition.matches !== undefined) return { field, operator: 'matches', pattern: condition.matches };
    for (const operator of NUMERIC_COMPARISONS) {
      const value = condition[operator];
      if (value !== undefined) return { field, operator, value };
    }
    throw new Error('unreachable: the refinement requires one operator');
  });

const conditionalApprovalSchema = z.strictObject({
  when: z.array(conditionSchema).min(1, 'must list at least one condition'),
  match: z.enum(['all', 'any']).default('all'),
});

const approvalSchema = z.union([z.enum(['always', 'never']), conditionalApprovalSchema], {
  error: 'must be always, never, or { when: [conditions], match: all | any }',
});

export const toolPatternSchema = z
  .string()
  .regex(TOOL_PATTERN_PATTERN, { error: 'must be a tool name or a glob of letters, digits, _, -, ., * and ?' })
  .refine((pattern) => !pattern.includes('***'), 'must not contain ***; use * within one name part or ** across parts');

const ruleSchema = z
  .strictObject({
    name: z.string().trim().min(1, 'must not be empty').max(80).optional(),
    tools: uniqueList(toolPatternSchema).min(1, 'must list at least one tool name or pattern'),
    channels: uniqueList(channelIdSchema).min(1, 'must list at least one channel; leave it out to apply everywhere').optional(),
    input: z.array(conditionSchema).min(1, 'must list at least one condition; leave it out to apply to every input').optional(),
    approval: approvalSchema.default('always'),
    ...settingsShape,
  })
  .superRefine((rule, context) => {
    if (rule.approval !== 'never') return;
    for (const key of SETTING_KEYS) {
      if (rule[key] !== undefined) context.addIssue({ code: 'custom', path: [key], message: 'has no effect with approval: never; remove it' });
    }
  });

const defaultsSchema = z.strictObject(settingsShape);

const autoApproveSchema = z
  .strictObject({
    global: z.boolean().default(false),
    channels: z.preprocess(nullAsAbsent, uniqueList(channelIdSchema).default([])),
  })
  .superRefine((autoApprove, context) => {
    if (autoApprove.global && autoApprove.channels.length > 0) {
      context.addIssue({ code: 'custom', path: ['channels'], message: 'has no effect while global is true; remove one of them' });
    }
  });

type RawSettings = z.output<typeof defaultsSchema>;
type Path = (string | number)[];

/**
 * Checks across rules (a repeated name, a rule an earlier one shadows). They run even when some rule
 * has an error of its own (`when`): zod skips refinements on a list with a bad item, and the operator
 * should see every problem in one run, so they read only the fields that are well formed.
 */
const rulesSchema = z.array(ruleSchema).superRefine(
  (rules, context) => {
    const report = (path: Path, message: string) => context.addIssue({ code: 'custom', path, message });
    const comparable = rules.map(comparableRule);
    checkRuleNames(comparable, report);
    checkShadowedRules(comparable, report);
  },
  { when: (payload) => Array.isArray(payload.value) },
);

/** What the cross-rule checks compare; a field that failed its own check is absent (its problem is reported there). */
interface ComparableRule {
  name?: string;
  tools?: readonly string[];
  channels?: readonly string[];
  hasInput: boolean;
}

function comparableRule(rule: unknown): ComparableRule {
  if (typeof rule !== 'object' || rule === null) return { hasInput: true };
  const { name, tools, channels, input } = rule as Record<string, unknown>;
  const strings = (value: unknown) => (Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined);
  const wellFormedChannels = strings(channels);
  return {
    ...(typeof name === 'string' && name !== '' ? { name } : {}),
    ...(strings(tools) === undefined ? {} : { tools: strings(tools) }),
    ...(wellFormedChannels === undefined ? {} : { channels: wellFormedChannels }),
    // A rule whose channels are malformed is treated like one with conditions: it is compared with nothing.
    hasInput: input !== undefined || (channels !== undefined && wellFormedChannels === undefined),
  };
}

const policyFieldsSchema = z.strictObject({
  autoApprove: z.preprocess(nullAsAbsent, autoApproveSchema.prefault({})),
  defaults: z.preprocess(nullAsAbsent, defaultsSchema.prefault({})),
  rules: z.preprocess(nullAsAbsent, rulesSchema.default([])),
});
type RawPolicy = z.output<typeof policyFieldsSchema>;

export const policySchema = policyFieldsSchema
  // Not in the transform, which zod skips once any field of the policy is wrong: the operator should
  // see these problems in the same run as that one.
  .superRefine(checkEffectiveSettings, { when: (payload) => isRecord(payload.value) })
  .transform((raw): PolicyConfig => {
    const defaults = resolveSettings({ own: raw.defaults });
    const rules = raw.rules.map((rawRule): PolicyRule => {
      const { name, tools, channels, input, approval } = rawRule;
      const settings = resolveSettings({ own: rawRule, defaults: { own: raw.defaults, effective: defaults } });
      return {
        ...(name === undefined ? {} : { name }),
        tools,
        ...(channels === undefined ? {} : { channels }),
        ...(input === undefined ? {} : { input }),
        approval,
        ...settings,
      };
    });
    return { autoApprove: raw.autoApprove, defaults, rules };
  });

/** Settings no check compares with another: one that is malformed does not stop the checks of its object. */
const INDEPENDENT_SETTINGS: readonly (typeof SETTING_KEYS)[number][] = ['onExpiry', 'autoApprove', 'grants'];
/** What checkSettings reads of an object: a rule's `approval` (never: not checked) and the other settings. */
const READ_BY_CHECKS: ReadonlySet<PropertyKey | undefined> = new Set(['approval', ...SETTING_KEYS.filter((key) => !INDEPENDENT_SETTINGS.includes(key))]);

/**
 * Runs checkSettings on `defaults` and on each rule whose fields the checks read are well formed,
 * even when other parts of the policy are wrong. `raw` holds what parsed: a field with a problem of
 * its own may hold anything, so an object with one among the fields the checks read (or that is not
 * an object, or has an unknown key, maybe a misspelled setting) is not checked, and rules, which
 * inherit from `defaults`, are not checked while `defaults` is not: a check on a guess would mislead.
 */
function checkEffectiveSettings(raw: RawPolicy, context: z.RefinementCtx<RawPolicy>): void {
  const issuePaths = context.issues.map((issue) => issue.path ?? []);
  const malformed = (at: Path) =>
    issuePaths.some((path) => at.every((key, index) => path[index] === key) && (path.length === at.length || READ_BY_CHECKS.has(path[at.length])));
  const report = (path: Path, message: string) => context.addIssue({ code: 'custom', path, message });
  if (malformed(['defaults'])) return;
  const defaults = resolveSettings({ own: raw.defaults });
  checkSettings({ own: raw.defaults, effective: defaults, at: ['defaults'], report });
  if (!Array.isArray(raw.rules)) return;
  raw.rules.forEach((rule, index) => {
    if (malformed(['rules', index]) || rule.approval === 'never') return;
    checkSettings({ own: rule, effective: resolveSettings({ own: rule, defaults: { own: raw.defaults, effective: defaults } }), at: ['rules', index], report });
  });
}

function isRecord(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every key the policy section knows, for "did you mean" hints on unknown keys. */
export const POLICY_CONFIG_KEYS: readonly string[] = [
  'policy',
  ...new Set([autoApproveSchema, defaultsSchema, ruleSchema, conditionalApprovalSchema].flatMap((schema) => Object.keys(schema.shape))),
  'field',
  ...OPERATORS,
];

export function approverKey(approver: ApproverSpec): string {
  switch (approver.kind) {
    case 'user':
      return approver.userId;
    case 'group':
      return `group:${approver.groupId}`;
    default:
      return approver.kind;
  }
}

/**
 * Self-approval follows the approver list it belongs to: naming approvers means "someone else
 * signs", unless the list itself names `requester` or is the open `channel`.
 */
function selfApprovalImpliedBy(approvers: readonly ApproverSpec[]): boolean {
  return approvers.some((approver) => approver.kind === 'requester' || approver.kind === 'channel');
}

/**
 * A rule's self-approval: its own `allowSelfApproval`, else, when it names its own approvers, what
 * they imply unless an explicit `defaults.allowSelfApproval` is stricter (a `false` there means
 * "nobody approves their own request", which `approvers: [channel]` in a rule must not quietly
 * undo, and a `true` there does not open a rule that names other people), else what it inherits.
 */
function selfApprovalOf({ own, approvers, defaults }: { own: RawSettings; approvers: readonly ApproverSpec[]; defaults: InheritedSettings | undefined }): boolean {
  if (own.allowSelfApproval !== undefined) return own.allowSelfApproval;
  if (defaults === undefined) return selfApprovalImpliedBy(approvers);
  if (own.approvers === undefined) return defaults.effective.allowSelfApproval;
  return selfApprovalImpliedBy(approvers) && defaults.own.allowSelfApproval !== false;
}

/** What a rule inherits: `defaults` as written (to tell an explicit setting from a derived one) and resolved. */
interface InheritedSettings {
  own: RawSettings;
  effective: PolicySettings;
}

function resolveSettings({ own, defaults }: { own: RawSettings; defaults?: InheritedSettings }): PolicySettings {
  const inherited = defaults?.effective;
  const approvers = own.approvers ?? inherited?.approvers ?? [{ kind: 'channel' }];
  const allowSelfApproval = selfApprovalOf({ own, approvers, defaults });
  const reminderMs = own.reminder === 'none' ? undefined : (own.reminder ?? inherited?.reminderMs);
  const notify = own.notify === undefined ? inherited?.notify : { thread: own.notify.thread ?? true, channels: own.notify.channels ?? [], dmApprovers: own.notify.dmApprovers ?? false };
  const escalation = own.escalation ?? inherited?.escalation;
  return {
    approvers,
    required: own.required ?? inherited?.required ?? 1,
    allowSelfApproval,
    expiryMs: own.expiry ?? inherited?.expiryMs ?? DEFAULT_EXPIRY_MS,
    ...(reminderMs === undefined ? {} : { reminderMs }),
    onExpiry: own.onExpiry ?? inherited?.onExpiry ?? 'stop',
    autoApprove: own.autoApprove ?? inherited?.autoApprove ?? 'allowed',
    grants: own.grants ?? inherited?.grants ?? 'allowed',
    ...(notify === undefined ? {} : { notify: { ...notify, channels: [...notify.channels] } }),
    ...(escalation === undefined || escalation.length === 0 ? {} : { escalation: escalation.map((stage) => ({ ...stage, addApprovers: stage.addApprovers.map((approver) => ({ ...approver })) })) }),
  };
}

/**
 * Checks that need the effective settings. A problem is reported at the key the operator has to
 * edit, which this object set itself; one that comes wholly from `defaults` is reported once, by
 * `defaults`, not again by every rule that inherits it.
 */
function checkSettings({ own, effective, at, report }: { own: RawSettings; effective: PolicySettings; at: Path; report: (path: Path, message: string) => void }): void {
  const inherited = (key: keyof RawSettings) => (at[0] === 'rules' && own[key] === undefined ? ' (inherited from defaults)' : '');

  if (effective.reminderMs !== undefined && effective.reminderMs >= effective.expiryMs) {
    const reminder = `${formatDuration(effective.reminderMs)}${inherited('reminder')}`;
    const expiry = `${formatDuration(effective.expiryMs)}${inherited('expiry')}`;
    const message = `the reminder, ${reminder} before expiry, must be shorter than the expiry of ${expiry}; shorten it or write reminder: none`;
    if (own.reminder !== undefined) report([...at, 'reminder'], message);
    else if (own.expiry !== undefined) report([...at, 'expiry'], message);
  }

  // Self-approval follows a rule's own approvers, so only an explicit `false` can contradict them:
  // the rule's own, or that of `defaults`, which a rule's approvers do not loosen (selfApprovalOf).
  const requesterListed = effective.approvers.some((approver) => approver.kind === 'requester');
  if (requesterListed && own.allowSelfApproval === false) {
    report([...at, 'allowSelfApproval'], `cannot be false while approvers${inherited('approvers')} lists requester; remove one of them`);
  } else if (requesterListed && !effective.allowSelfApproval && own.approvers !== undefined) {
    report([...at, 'approvers'], 'lists requester, but allowSelfApproval is false (inherited from defaults); set allowSelfApproval: true in this rule to let requesters approve their own calls, or remove requester');
  }

  checkNotify({ own, effective, at, report, inherited });
  checkEscalation({ own, effective, at, report, inherited });

  // Only named users can be counted; a group or the channel may hold any number of people.
  const countable = effective.approvers.every((approver) => approver.kind === 'user' || approver.kind === 'requester');
  if (countable && effective.required > effective.approvers.length) {
    const message = `asks for ${effective.required} distinct approvers${inherited('required')} but approvers${inherited('approvers')} names only ${effective.approvers.length}`;
    if (own.required !== undefined) report([...at, 'required'], message);
    else if (own.approvers !== undefined) report([...at, 'approvers'], message);
  }
}

/** What a check of one settings object gets: its own keys, the effective settings, where to report. */
interface SettingsCheck {
  own: RawSettings;
  effective: PolicySettings;
  at: Path;
  report: (path: Path, message: string) => void;
  /** ` (inherited from defaults)` when a rule did not set `key` itself. */
  inherited: (key: keyof RawSettings) => string;
}

/** A card must reach someone who may approve it: somewhere with buttons, and DMs only to named people. */
function checkNotify({ own, effective, at, report, inherited }: SettingsCheck): void {
  const { notify } = effective;
  if (notify === undefined) return;
  const named = effective.approvers.some((approver) => approver.kind === 'user');
  if (own.notify !== undefined && !notify.thread && notify.channels.length === 0 && !notify.dmApprovers) {
    report([...at, 'notify', 'thread'], 'is false but no channels or dmApprovers are given, so nobody could approve; name a channel or set dmApprovers: true');
  } else if (!notify.thread && effective.approvers.some((approver) => approver.kind === 'channel')) {
    // `channel` means the people of the thread's channel, who can act only on the thread's card: with
    // `thread: false` that card has no buttons, and the copies refuse them ("from the thread there").
    const why = "channel (anyone in the thread's channel) can approve only on the thread's card, which has no buttons with thread: false; keep the thread's card or name users or groups as approvers";
    if (own.notify?.thread !== undefined) report([...at, 'notify', 'thread'], `is false but approvers${inherited('approvers')} includes channel: ${why}`);
    else if (own.approvers !== undefined) report([...at, 'approvers'], `includes channel but notify.thread${inherited('notify')} is false: ${why}`);
  }
  if (!notify.thread && notify.channels.length === 0 && notify.dmApprovers) checkGroupsWithoutChannel({ own, effective, at, report, inherited });
  if (notify.dmApprovers && !named) {
    const message = `is true but approvers${inherited('approvers')} names no user (U…) to send a DM to; name users or remove dmApprovers`;
    if (own.notify?.dmApprovers !== undefined) report([...at, 'notify', 'dmApprovers'], message);
    else if (own.approvers !== undefined) report([...at, 'approvers'], message);
  }
}

/**
 * With `thread: false` and no channel, the cards with buttons are the DMs, which go only to users
 * named by id: a group (as an approver, or added by a hop) would have nowhere to decide.
 */
function checkGroupsWithoutChannel({ own, effective, at, report, inherited }: SettingsCheck): void {
  const why = 'a group gets no DM (DMs go only to users named by id), so with thread: false and no notify.channels its members would have no card with buttons; name an approval channel in notify.channels, keep the thread\'s card, or name the users';
  if (effective.approvers.some((approver) => approver.kind === 'group')) {
    if (own.approvers !== undefined) report([...at, 'approvers'], `includes a group but notify${inherited('notify')} has thread: false and no channels: ${why}`);
    else if (own.notify !== undefined) report([...at, 'notify', 'thread'], `is false with no channels but approvers${inherited('approvers')} includes a group: ${why}`);
  }
  (effective.escalation ?? []).forEach((stage, index) => {
    const group = stage.addApprovers.findIndex((approver) => approver.kind === 'group');
    if (group === -1) return;
    if (own.escalation !== undefined) report([...at, 'escalation', index, 'addApprovers', group], `adds a group but notify${inherited('notify')} has thread: false and no channels: ${why}`);
    else if (own.notify !== undefined) report([...at, 'notify', 'thread'], `is false with no channels but escalation${inherited('escalation')} adds a group: ${why}`);
  });
}

/** Hops come in time order and before expiry, which stays the last step. */
function checkEscalation({ own, effective, at, report, inherited }: SettingsCheck): void {
  const stages = effective.escalation ?? [];
  stages.forEach((stage, index) => {
    const path = [...at, 'escalation', index, 'after'];
    const previous = stages[index - 1];
    if (previous !== undefined && stage.afterMs <= previous.afterMs) {
      if (own.escalation !== undefined) report(path, `must be later than the stage before it (${formatDuration(previous.afterMs)}); stages count from the request`);
    } else if (stage.afterMs >= effective.expiryMs) {
      const message = `comes at or after the expiry of ${formatDuration(effective.expiryMs)}${inherited('expiry')}; expiry is the last step, so shorten it or lengthen expiry`;
      if (own.escalation !== undefined) report(path, message);
      else if (own.expiry !== undefined) report([...at, 'expiry'], message);
    }
  });
}

function checkRuleNames(rules: readonly ComparableRule[], report: (path: Path, message: string) => void): void {
  const firstIndexByName = new Map<string, number>();
  rules.forEach((rule, index) => {
    if (rule.name === undefined) return;
    const first = firstIndexByName.get(rule.name);
    if (first === undefined) firstIndexByName.set(rule.name, index);
    else report([index, 'name'], `duplicates the name of rules[${first}]`);
  });
}

/**
 * A rule without input conditions each of whose patterns is covered by a pattern of an earlier such
 * rule with the same (or a wider set of) channels can never be chosen: every tool it matches, the
 * earlier rule matches too, at least as specifically (see select-rule.ts), and comes first: `ops.*`
 * after `ops.**`, `restart_?*` after `restart_*`. Left silent, the operator believes a setting
 * applies that never does.
 */
function checkShadowedRules(rules: readonly ComparableRule[], report: (path: Path, message: string) => void): void {
  rules.forEach((rule, index) => {
    // A rule with input conditions outranks one without for the inputs it covers (see select-rule.ts),
    // so nothing earlier shadows it.
    if (rule.hasInput) return;
    const tools = rule.tools;
    if (tools === undefined || tools.length === 0) return;
    const coveredBy = tools.map((pattern) => {
      for (const [earlierIndex, earlier] of rules.slice(0, index).entries()) {
        // A rule with input conditions covers only some inputs, so it shadows nothing.
        if (earlier.hasInput || !channelsCover(earlier.channels, rule.channels)) continue;
        const wider = earlier.tools?.find((candidate) => shadowsPattern(candidate, pattern));
        if (wider !== undefined) return { earlierIndex, wider, pattern };
      }
      return undefined;
    });
    if (!coveredBy.every((cover) => cover !== undefined)) return;
    const earlierIndexes = [...new Set(coveredBy.map((cover) => cover.earlierIndex))];
    const earlier = earlierIndexes.map((earlierIndex) => ruleLabel(rules, earlierIndex)).join(', ');
    const where = rule.channels === undefined ? '' : ' in these channels';
    const globs = coveredBy.filter((cover) => cover.wider !== cover.pattern).map((cover) => `${cover.pattern} by ${cover.wider}`);
    const [covers, comes] = earlierIndexes.length === 1 ? ['covers', 'comes'] : ['cover', 'come'];
    const what = globs.length === 0 ? 'the same tools' : `every tool it names (${globs.join(', ')})`;
    report([index, 'tools'], `is never used: ${earlier} already ${covers} ${what}${where} and ${comes} first`);
  });
}

/**
 * Whether a rule with `wider` wins every tool `narrower` matches over a later one with `narrower`:
 * it matches them all (`toolPatternCovers`), and is as specific for each (select-rule.ts ranks
 * literal characters, then an exact name; a pattern covering another has at most as many).
 */
function shadowsPattern(wider: string, narrower: string): boolean {
  if (wider === narrower) return true;
  // Cheap, and rules out most pairs: without it, 400 rules took seconds to load.
  if (!toolPatternsMayOverlap(wider, narrower)) return false;
  if (!toolPatternSchema.safeParse(wider).success || !toolPatternSchema.safeParse(narrower).success) return false;
  const [widerPattern, narrowerPattern] = [compileToolPattern(wider), compileToolPattern(narrower)];
  if (widerPattern.literalCharacters !== narrowerPattern.literalCharacters) return false;
  if (narrowerPattern.exact && !widerPattern.exact) return false;
  return toolPatternCovers(wider, narrower);
}

function ruleLabel(rules: readonly ComparableRule[], index: number): string {
  const name = rules[index]?.name;
  return `rules[${index}]${name === undefined ? '' : ` (${JSON.stringify(name)})`}`;
}

function channelsCover(earlier: readonly string[] | undefined, later: readonly string[] | undefined): boolean {
  if (earlier === undefined || later === undefined) return earlier === later;
  return later.every((channel) => earlier.includes(channel));
}
