import { USERS } from './countersignature-world.js';

/**
 * The reference model for inputs that may fall under several rules, written from the README's
 * "Approval policy" section and sharing no code with the bot:
 *
 * - a rule's `input:` condition compares by value, reads through lists and leans to "met" when
 *   unsure (a list with some elements in and some out, a `null`); a field that is absent never
 *   matches;
 * - the rules an input may fall under (its candidates) are the `input:` rules it meets or may meet,
 *   in file order, up to the first it surely meets, then the rule for every input (or the defaults);
 * - it needs approval if any candidate asks for it, and then only someone every asking candidate
 *   lets approve may approve it; the largest quorum; no self-approval, automatic approval or grant
 *   where any of them forbids it; the shortest expiry; and where the rules have too few people in
 *   common for the quorum, the call is closed (at once, or at the first click when that depends on
 *   who is in a user group), and an edit to such an input is refused;
 * - after a deploy, a waiting or approved version is held to the rules it was stored with and to
 *   those the config in force gives its input (eligible under both, the larger quorum, either
 *   one's ban), as the existing deploy model has it.
 */
export const NAMESPACES = ['dev', 'staging', 'prod'] as const;
export type Namespace = (typeof NAMESPACES)[number];
/** Two user groups (on-call, developers), with members drawn at random. */
export const GROUPS = ['S0ONCALL', 'S0DEVS'] as const;
export const HOOK_ACTOR = 'hook:h1';

export type UInput = { service: string; namespaces?: Namespace | null | Array<Namespace | null> };

export type UApprovers =
  | { kind: 'channel' }
  | { kind: 'requester' }
  | { kind: 'group'; group: number }
  | { kind: 'users'; users: string[] }
  | { kind: 'users+group'; users: string[]; group: number };

export interface USettings {
  approvers: UApprovers;
  required: number;
  allowSelfApproval: boolean;
  expiryMinutes: number;
  autoApprove: 'allowed' | 'forbidden';
  grants: 'allowed' | 'identicalArguments' | 'forbidden';
}

export interface UCondition {
  op: 'oneOf' | 'equals';
  values: Namespace[];
}

export interface URule extends USettings {
  name: string;
  /** Absent: the rule for every input (or the defaults). */
  condition?: UCondition;
  approval: 'always' | 'never';
}

export interface UPolicy {
  /** Rules with an `input:` condition, in file order. */
  inputRules: URule[];
  /** The rule for every input; absent: the defaults apply where no rule surely does. */
  general?: URule;
  defaults: USettings;
  /** Who is in each user group (`GROUPS`), as Slack says (not part of the config; a deploy keeps it). */
  groupMembers: string[][];
}

export const DEFAULTS_NAME = '(defaults)';
export const defaultsRule = (policy: UPolicy): URule => ({ name: DEFAULTS_NAME, approval: 'always', ...policy.defaults });

type Outcome = 'met' | 'unmet' | 'unclear';

/** A condition on `namespaces`, as the README describes conditions. */
export function conditionOutcome(condition: UCondition, input: UInput): Outcome {
  if (!Object.hasOwn(input, 'namespaces') || input.namespaces === undefined) return 'unmet';
  const one = (value: Namespace | null): Outcome => {
    if (value === null) return 'unclear';
    const met = condition.op === 'equals' ? value === condition.values[0] : condition.values.includes(value);
    return met ? 'met' : 'unmet';
  };
  const value = input.namespaces;
  if (!Array.isArray(value)) return one(value);
  const outcomes = value.map(one);
  if (outcomes.length > 0 && outcomes.every((outcome) => outcome === 'met')) return 'met';
  if (outcomes.every((outcome) => outcome === 'unmet')) return 'unmet';
  return 'unclear';
}

/** The rules `input` may fall under, in the order they are considered. */
export function candidates(policy: UPolicy, input: UInput): URule[] {
  const found: URule[] = [];
  for (const rule of policy.inputRules) {
    const outcome = conditionOutcome(rule.condition!, input);
    if (outcome === 'unmet') continue;
    found.push(rule);
    if (outcome === 'met') return found;
  }
  found.push(policy.general ?? defaultsRule(policy));
  return found;
}

/** The candidates that ask for approval: the ones whose limits the input must meet. */
export const askingRules = (policy: UPolicy, input: UInput): URule[] => candidates(policy, input).filter((rule) => rule.approval === 'always');

export const contentOf = (rules: readonly URule[]) => JSON.stringify(rules);

export function inList(policy: UPolicy, approvers: UApprovers, user: string, requester: string): boolean {
  switch (approvers.kind) {
    case 'channel':
      return true;
    case 'requester':
      return user === requester;
    case 'group':
      return policy.groupMembers[approvers.group]!.includes(user);
    case 'users':
      return approvers.users.includes(user);
    case 'users+group':
      return approvers.users.includes(user) || policy.groupMembers[approvers.group]!.includes(user);
  }
}

/** A set of rule sets that govern together (a version's stored rules, and the config in force's when they differ). */
export type Governing = URule[][];

/** May `user` approve under every rule of every set? (The hook's actor never is a person.) */
export function eligibleUnder(policy: UPolicy, sets: Governing, user: string, requester: string): boolean {
  if (user.startsWith('hook:')) return false;
  const rules = sets.flat();
  if (user === requester && !rules.every((rule) => rule.allowSelfApproval)) return false;
  return rules.every((rule) => inList(policy, rule.approvers, user, requester));
}

export const requiredOf = (sets: Governing) => Math.max(1, ...sets.flat().map((rule) => rule.required));
export const forbidsAuto = (sets: Governing) => sets.flat().some((rule) => rule.autoApprove === 'forbidden');
export const forbidsGrants = (sets: Governing) => sets.flat().some((rule) => rule.grants === 'forbidden');
export const identicalOnly = (sets: Governing) => sets.flat().some((rule) => rule.grants === 'identicalArguments');
export const expiryMsOf = (rules: readonly URule[]) => Math.min(...rules.map((rule) => rule.expiryMinutes)) * 60_000;
const namesGroup = (approvers: UApprovers) => approvers.kind === 'group' || approvers.kind === 'users+group';

/**
 * Whether nobody can reach the quorum under every rule of `sets`: only asked where rules combine (an
 * unclear input, or a card's rules and different ones in force). Judged on a certainty only: when
 * every rule lets anyone in the channel approve, or a group's members are not known, it is open.
 */
export function unapprovable(policy: UPolicy, sets: Governing, requester: string, { groupsKnown }: { groupsKnown: boolean }): boolean {
  const rules = sets.flat();
  if (sets.length < 2 && rules.length < 2) return false;
  if (rules.every((rule) => rule.approvers.kind === 'channel')) return false;
  if (!groupsKnown && rules.some((rule) => namesGroup(rule.approvers))) return false;
  return USERS.filter((user) => eligibleUnder(policy, sets, user, requester)).length < requiredOf(sets);
}

export interface UVersion {
  input: UInput;
  /** The asking rules the version was stored with. */
  stored: URule[];
}

export interface UStep {
  stepId: string;
  requester: string;
  threadTs: string;
  createdAt: number;
  expiresAt: number;
  state: 'pending' | 'complete' | 'superseded' | 'resumed';
  outcome?: 'approved' | 'denied' | 'expired' | 'superseded';
  versions: UVersion[];
  approvals: Array<Set<string>>;
  approvedVersion?: number;
  decidedAt?: number;
  approvedByHook?: boolean;
  executed: number;
}

export interface UGrant {
  grantId?: string;
  grantor: string;
  /** The asking rules the grant was given under (its policy's identity). */
  rules: URule[];
  input: UInput;
  scope: 'thread' | 'channel';
  threadTs: string;
  identical: boolean;
  expiresAt: number;
}

export interface UModel {
  /** The config of the process in force. */
  policy: UPolicy;
  /** The config of the process before the last deploy, still up during a rolling deploy (clicks may reach it). */
  previous?: UPolicy;
  now: number;
  steps: UStep[];
  grants: UGrant[];
}

export const sameInput = (left: UInput, right: UInput) => canonical(left) === canonical(right);
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What governs `version` now: its stored rules, and the config in force's for its input when they differ (and ask). */
export function governing(model: UModel, version: UVersion): Governing {
  const current = askingRules(model.policy, version.input);
  return current.length > 0 && contentOf(current) !== contentOf(version.stored) ? [version.stored, current] : [version.stored];
}

export function governingExpiry(model: UModel, step: UStep, version: UVersion): number {
  const current = askingRules(model.policy, version.input);
  return current.length === 0 ? step.expiresAt : Math.min(step.expiresAt, step.createdAt + expiryMsOf(current));
}

// ---------------------------------------------------------------------------------------------
// New calls

export type ProposalOutcome =
  | { kind: 'no-approval' }
  | { kind: 'schedule' }
  /** `expected`: grants the model is sure cover the call; `safe`: every grant that may (never one that must not). */
  | { kind: 'grant-or-card'; expected: UGrant[]; safe: UGrant[] };

/** Whether `grant` may stand in for a person on this call; `strict`: also given under exactly the call's rules. */
export function grantCovers(model: UModel, grant: UGrant, call: { requester: string; threadTs: string; input: UInput }, { strict }: { strict: boolean }): boolean {
  const rules = askingRules(model.policy, call.input);
  if (rules.length === 0) return false;
  if (grant.expiresAt <= model.now) return false;
  if (grant.scope === 'thread' && grant.threadTs !== call.threadTs) return false;
  if (forbidsGrants([rules]) || requiredOf([rules]) > 1) return false;
  if ((grant.identical || identicalOnly([rules])) && !sameInput(grant.input, call.input)) return false;
  // Never a grant given under one rule alone for a call that may fall under more.
  if (rules.length > grant.rules.length) return false;
  if (strict && contentOf(rules) !== contentOf(grant.rules)) return false;
  return eligibleUnder(model.policy, [rules], grant.grantor, call.requester);
}

export function proposalOutcome(model: UModel, call: { requester: string; threadTs: string; input: UInput; scheduled: boolean }): ProposalOutcome {
  const rules = askingRules(model.policy, call.input);
  if (rules.length === 0) return { kind: 'no-approval' };
  if (call.scheduled && !forbidsAuto([rules])) return { kind: 'schedule' };
  return {
    kind: 'grant-or-card',
    expected: model.grants.filter((grant) => grantCovers(model, grant, call, { strict: true })),
    safe: model.grants.filter((grant) => grantCovers(model, grant, call, { strict: false })),
  };
}

/** The step a call that waits for people becomes, after the approval hook had its say. */
export function openStep(model: UModel, call: { stepId: string; requester: string; threadTs: string; input: UInput; hook: 'approve' | 'deny' | 'abstain' }): UStep {
  const stored = askingRules(model.policy, call.input);
  const step: UStep = {
    stepId: call.stepId,
    requester: call.requester,
    threadTs: call.threadTs,
    createdAt: model.now,
    expiresAt: model.now + expiryMsOf(stored),
    state: 'pending',
    versions: [{ input: call.input, stored }],
    approvals: [new Set()],
    executed: 0,
  };
  const close = (outcome: 'approved' | 'denied') => {
    step.state = 'complete';
    step.outcome = outcome;
    step.decidedAt = model.now;
  };
  // Nobody named by every rule (groups unread yet): closed when built, before the hook is asked.
  if (unapprovable(model.policy, [stored], call.requester, { groupsKnown: false })) close('denied');
  else if (call.hook === 'deny') close('denied');
  else if (call.hook === 'approve' && !forbidsAuto([stored])) {
    close('approved');
    step.approvedVersion = 0;
    step.approvedByHook = true;
    step.approvals[0]!.add(HOOK_ACTOR);
  }
  return step;
}

// ---------------------------------------------------------------------------------------------
// Clicks

export type UClick = { kind: 'approve' | 'deny' | 'edit' | 'grant'; user: string; version: 'current' | 'previous'; input: UInput; grant: { scope: 'thread' | 'channel'; hours: 1 | 4; identical: boolean } };

export type ClickVerdict = { kind: 'refused' } | { kind: 'expired' } | { kind: 'applied'; grant?: UGrant } | { kind: 'closed' } | { kind: 'skip' };

/**
 * Whether the model can say what this click does: not an edit to another input of a version whose
 * rules a deploy changed since its card, or made ask for nothing (which of the two an edit then
 * keeps is the bot's choice, the stricter or else the card's; the deploy model covers it).
 */
export function predictable(model: UModel, step: UStep, click: UClick): boolean {
  if (click.kind !== 'edit' || step.state !== 'pending') return true;
  const version = step.versions.at(-1)!;
  return sameInput(click.input, version.input) || contentOf(askingRules(model.policy, version.input)) === contentOf(version.stored);
}

/** What the promise says of a click now, and the model after it. */
export function click(model: UModel, step: UStep, action: UClick): ClickVerdict {
  if (step.state !== 'pending' || step.outcome !== undefined) return { kind: 'refused' };
  const current = step.versions.length - 1;
  const version = step.versions[current]!;
  if (model.now >= governingExpiry(model, step, version)) {
    decide(model, step, 'expired');
    return { kind: 'expired' };
  }
  const sets = governing(model, version);
  const { policy } = model;
  const shut = unapprovable(policy, sets, step.requester, { groupsKnown: true });
  const close = (): ClickVerdict => {
    decide(model, step, 'denied');
    return { kind: 'closed' };
  };
  if (action.kind === 'deny') {
    const may = action.user === step.requester || step.approvals[current]!.has(action.user) || sets.some((set) => eligibleUnder(policy, [set], action.user, step.requester));
    if (may) {
      decide(model, step, 'denied');
      return { kind: 'applied' };
    }
    return shut ? close() : { kind: 'refused' };
  }
  if (action.version === 'previous' && current > 0) return { kind: 'refused' };
  if (shut) return close();
  if (!eligibleUnder(policy, sets, action.user, step.requester)) return { kind: 'refused' };
  if (action.kind === 'approve' || action.kind === 'grant' || sameInput(action.input, version.input)) return approve(model, step, current, sets, action);
  // An edit to another input: a new version, under the rules the config in force gives it.
  const inForce = askingRules(policy, action.input);
  const stored = inForce.length > 0 ? inForce : version.stored;
  if (unapprovable(policy, [stored], step.requester, { groupsKnown: true })) return { kind: 'refused' };
  const expiresAt = Math.min(step.expiresAt, step.createdAt + expiryMsOf(stored), inForce.length > 0 ? step.createdAt + expiryMsOf(inForce) : Infinity);
  if (expiresAt <= model.now) return { kind: 'refused' };
  step.expiresAt = expiresAt;
  step.versions.push({ input: action.input, stored });
  step.approvals.push(new Set());
  const next = step.versions[current + 1]!;
  const nextSets = governing(model, next);
  if (eligibleUnder(policy, nextSets, action.user, step.requester)) {
    step.approvals[current + 1]!.add(action.user);
    if (step.approvals[current + 1]!.size >= requiredOf(nextSets)) approved(model, step, current + 1);
  }
  return { kind: 'applied' };
}

function approve(model: UModel, step: UStep, index: number, sets: Governing, action: UClick): ClickVerdict {
  const approvals = step.approvals[index]!;
  if (approvals.has(action.user)) return { kind: 'refused' };
  const required = requiredOf(sets);
  if (action.kind === 'grant' && (forbidsGrants(sets) || required > 1)) return { kind: 'refused' };
  // Earlier approvals that no longer hold (a deploy took their approvers off) come off the step.
  for (const user of [...approvals]) if (!eligibleUnder(model.policy, sets, user, step.requester)) approvals.delete(user);
  approvals.add(action.user);
  if (approvals.size < required) return { kind: 'applied' };
  approved(model, step, index);
  if (action.kind !== 'grant') return { kind: 'applied' };
  const version = step.versions[index]!;
  const grant: UGrant = {
    grantor: action.user,
    // Given under the card's rules, or, after a deploy that changed them, the config in force's.
    rules: sets.at(-1)!,
    input: version.input,
    scope: action.grant.scope,
    threadTs: step.threadTs,
    identical: action.grant.identical || identicalOnly(sets),
    expiresAt: model.now + action.grant.hours * 3_600_000,
  };
  model.grants.push(grant);
  return { kind: 'applied', grant };
}

function approved(model: UModel, step: UStep, index: number) {
  decide(model, step, 'approved');
  step.approvedVersion = index;
}

function decide(model: UModel, step: UStep, outcome: 'approved' | 'denied' | 'expired') {
  step.state = 'complete';
  step.outcome = outcome;
  step.decidedAt = model.now;
}

// ---------------------------------------------------------------------------------------------
// Resume

export type ResumeOutcome = { kind: 'run' } | { kind: 'close'; why: string } | { kind: 'nothing-runs' } | { kind: 'no-op' };

/** What a resume of a decided step does now: run the approved version, close it (its countersignature no longer holds), or run nothing. */
export function resumeOutcome(model: UModel, step: UStep): ResumeOutcome {
  if (step.state !== 'complete') return { kind: 'no-op' };
  if (step.outcome !== 'approved') return { kind: 'nothing-runs' };
  const version = step.versions[step.approvedVersion!]!;
  const sets = governing(model, version);
  if (step.decidedAt! >= governingExpiry(model, step, version)) return { kind: 'close', why: 'approved after the deadline now in force' };
  if (step.approvedByHook) return forbidsAuto(sets) ? { kind: 'close', why: 'automatic approval forbidden' } : { kind: 'run' };
  const approvers = [...step.approvals[step.approvedVersion!]!];
  if (approvers.length < requiredOf(sets)) return { kind: 'close', why: `${approvers.length} of ${requiredOf(sets)} approvals` };
  if (approvers.some((user) => !eligibleUnder(model.policy, sets, user, step.requester))) return { kind: 'close', why: 'an approver is not eligible under every rule' };
  return { kind: 'run' };
}

/**
 * The guarantee for a call that ran after its step, judged on the model as it stands (the config
 * in force): approved as exactly this input, by at least the largest quorum of the rules it may fall
 * under, each approver eligible under every one of them (or by the hook, where none forbids it),
 * before the deadline, and never before.
 */
export function executionViolation(model: UModel, step: UStep, input: unknown): string | undefined {
  if (step.executed > 0) return 'ran twice';
  if (step.outcome !== 'approved' || step.approvedVersion === undefined) return `ran without approval (outcome ${step.outcome ?? 'none'})`;
  const version = step.versions[step.approvedVersion]!;
  if (canonical(version.input) !== canonical(input)) return `ran ${JSON.stringify(input)} but ${JSON.stringify(version.input)} was approved`;
  const inForce = askingRules(model.policy, version.input);
  const sets: Governing = inForce.length > 0 ? [version.stored, inForce] : [version.stored];
  if (step.decidedAt! >= governingExpiry(model, step, version)) return 'approved after the deadline in force';
  if (step.approvedByHook) return forbidsAuto(sets) ? 'hook-approved where a rule it may fall under forbids automatic approval' : undefined;
  const approvers = [...step.approvals[step.approvedVersion]!];
  if (approvers.length < requiredOf(sets)) return `ran with ${approvers.length} of ${requiredOf(sets)} approvals`;
  const wrong = approvers.find((user) => !eligibleUnder(model.policy, sets, user, step.requester));
  return wrong ? `counted ${wrong}, who is not an approver under every rule the input may fall under` : undefined;
}
