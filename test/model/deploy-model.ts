import { ONCALL_MEMBERS, USERS, type ApproverChoice, type Input } from './countersignature-world.js';

/**
 * The reference model for deploys while cards wait: the config in force (each rule's quorum,
 * expiry and whether a hook may approve; the tool's definition; the approval hook) changes under
 * waiting and decided steps. Written from the promise, sharing no code with the bot: a call runs
 * only with the countersignature the governing policy demands (the stricter of the policy its
 * version was stored with and the config in force), for exactly the approved version, on the tool
 * definition its approvers saw, at most once.
 */
export type ClassName = 'prod' | 'other';
export type ToolVersion = 'v1' | 'v2' | 'removed';
export type HookName = 'h1' | 'h2';

/** A rule as the config file says it; `name` and content together are its identity (its fingerprint). */
export interface DRule {
  name: ClassName;
  approvers: ApproverChoice;
  required: number;
  allowSelfApproval: boolean;
  expiryMinutes: number;
  autoApprove: 'allowed' | 'forbidden';
}

export interface DConfig {
  prod: DRule;
  other: DRule;
  tool: ToolVersion;
  hook: HookName | undefined;
}

export interface DVersion {
  input: Input;
  /** The rule the version was stored with. */
  rule: DRule;
}

export interface DStep {
  stepId: string;
  requester: string;
  createdAt: number;
  /** The step's stored deadline (edits may bring it forward). */
  expiresAt: number;
  /** The tool's definition when the card was built: what every approval of it signs. */
  tool: Exclude<ToolVersion, 'removed'>;
  state: 'pending' | 'complete' | 'superseded' | 'resumed';
  outcome?: 'approved' | 'denied' | 'expired' | 'superseded';
  versions: DVersion[];
  approvals: Array<Set<string>>;
  approvedVersion?: number;
  decidedAt?: number;
  /** `hook:<name>` when the hook approved it. */
  approvedByHook?: HookName;
  /** Claimed for its resume by a process that died before running it: another process finishes the turn. */
  interrupted?: boolean;
  executed: number;
}

export interface DModel {
  config: DConfig;
  now: number;
  steps: DStep[];
}

export const classOf = (input: Input): ClassName => (input.namespace === 'prod' ? 'prod' : 'other');
export const sameInput = (left: Input, right: Input) => left.service === right.service && left.namespace === right.namespace;
export const sameRule = (left: DRule, right: DRule) => JSON.stringify(left) === JSON.stringify(right);
export const inForce = (model: DModel, input: Input): DRule => model.config[classOf(input)];

export function eligible(rule: DRule, user: string, requester: string): boolean {
  if (user.startsWith('hook:')) return false;
  if (user === requester && !rule.allowSelfApproval) return false;
  switch (rule.approvers.kind) {
    case 'channel':
      return true;
    case 'group':
      return ONCALL_MEMBERS.has(user);
    case 'users':
      return rule.approvers.users.includes(user);
  }
}

/** What governs a version now: its stored rule and the config in force's rule for its input. */
export function governing(model: DModel, version: DVersion) {
  const current = inForce(model, version.input);
  return {
    stored: version.rule,
    current,
    changed: !sameRule(version.rule, current),
    required: Math.max(version.rule.required, current.required),
    eligible: (user: string, requester: string) => eligible(version.rule, user, requester) && eligible(current, user, requester),
  };
}

/** The deadline of a step's waiting (or approved) version: the stored one, brought forward by the config in force. */
export function governingExpiry(model: DModel, step: DStep, version: DVersion): number {
  return Math.min(step.expiresAt, step.createdAt + inForce(model, version.input).expiryMinutes * 60_000);
}

/** Nobody (of everyone there is) could reach the quorum under both rules, which differ. */
export function unapprovable(model: DModel, step: DStep, version: DVersion): boolean {
  const rules = governing(model, version);
  if (!rules.changed) return false;
  if (rules.stored.approvers.kind === 'channel' && rules.current.approvers.kind === 'channel') return false;
  return USERS.filter((user) => rules.eligible(user, step.requester)).length < rules.required;
}

const approverKeys = (approvers: ApproverChoice): string[] =>
  approvers.kind === 'channel' ? ['channel'] : approvers.kind === 'group' ? ['group'] : approvers.users.map((user) => `user:${user}`);

function atLeastAsStrict(left: DRule, right: DRule): boolean {
  const outer = new Set(approverKeys(right.approvers));
  const within = outer.has('channel') || approverKeys(left.approvers).every((key) => outer.has(key));
  return (
    within &&
    left.required >= right.required &&
    (right.allowSelfApproval || !left.allowSelfApproval) &&
    (left.autoApprove === 'forbidden' ? 1 : 0) >= (right.autoApprove === 'forbidden' ? 1 : 0)
  );
}

/** The rule an edit stores: the new input's rule in force, unless the config changed since the card's rule (then the stricter, else the card's). */
export function editedRule(model: DModel, version: DVersion, input: Input): DRule {
  const next = inForce(model, input);
  if (sameRule(version.rule, inForce(model, version.input))) return next;
  return atLeastAsStrict(next, version.rule) && !atLeastAsStrict(version.rule, next) ? next : version.rule;
}

export type DClick = { kind: 'approve' | 'deny' | 'edit'; user: string; version: 'current' | 'previous'; input: Input };

export type ClickVerdict = { kind: 'refused' } | { kind: 'expired' } | { kind: 'applied' } | { kind: 'closed-unapprovable' };

/** What the promise says of a click now, and the model after it. */
export function click(model: DModel, step: DStep, action: DClick): ClickVerdict {
  if (step.state !== 'pending' || step.outcome !== undefined) return { kind: 'refused' };
  const current = step.versions.length - 1;
  const version = step.versions[current]!;
  if (model.now >= governingExpiry(model, step, version)) {
    step.state = 'complete';
    step.outcome = 'expired';
    step.decidedAt = model.now;
    return { kind: 'expired' };
  }
  const rules = governing(model, version);
  const closeUnapprovable = (): ClickVerdict => {
    step.state = 'complete';
    step.outcome = 'denied';
    step.decidedAt = model.now;
    return { kind: 'closed-unapprovable' };
  };
  const decide = (index: number) => {
    const need = governing(model, step.versions[index]!).required;
    if (step.approvals[index]!.size >= Math.max(1, need)) {
      step.state = 'complete';
      step.outcome = 'approved';
      step.approvedVersion = index;
      step.decidedAt = model.now;
    }
  };
  if (action.kind === 'deny') {
    const may = action.user === step.requester || step.approvals[current]!.has(action.user) || eligible(rules.stored, action.user, step.requester) || eligible(rules.current, action.user, step.requester);
    if (may) {
      step.state = 'complete';
      step.outcome = 'denied';
      step.decidedAt = model.now;
      return { kind: 'applied' };
    }
    return unapprovable(model, step, version) ? closeUnapprovable() : { kind: 'refused' };
  }
  if (action.version === 'previous' && current > 0) return { kind: 'refused' };
  if (unapprovable(model, step, version)) return closeUnapprovable();
  if (!rules.eligible(action.user, step.requester)) return { kind: 'refused' };
  if (action.kind === 'approve' || sameInput(action.input, version.input)) {
    if (step.approvals[current]!.has(action.user)) return { kind: 'refused' };
    step.approvals[current]!.add(action.user);
    decide(current);
    return { kind: 'applied' };
  }
  const rule = editedRule(model, version, action.input);
  const expiresAt = Math.min(step.expiresAt, step.createdAt + rule.expiryMinutes * 60_000, step.createdAt + inForce(model, action.input).expiryMinutes * 60_000);
  if (expiresAt <= model.now) return { kind: 'refused' };
  step.expiresAt = expiresAt;
  step.versions.push({ input: action.input, rule });
  step.approvals.push(new Set());
  if (governing(model, step.versions[current + 1]!).eligible(action.user, step.requester)) {
    step.approvals[current + 1]!.add(action.user);
    decide(current + 1);
  }
  return { kind: 'applied' };
}

/** What a resume of a decided step does now: run the approved version, close it (no longer holds), or run nothing. */
export function resumeOutcome(model: DModel, step: DStep): { kind: 'run' } | { kind: 'close'; why: string } | { kind: 'nothing-runs' } | { kind: 'no-op' } {
  if (step.state !== 'complete' && !(step.state === 'resumed' && step.interrupted)) return { kind: 'no-op' };
  if (step.outcome !== 'approved') return { kind: 'nothing-runs' };
  const version = step.versions[step.approvedVersion!]!;
  const rules = governing(model, version);
  if (step.decidedAt! >= governingExpiry(model, step, version)) return { kind: 'close', why: 'approved after the deadline now in force' };
  if (step.approvedByHook !== undefined) {
    if (model.config.hook !== step.approvedByHook) return { kind: 'close', why: 'the hook that approved it is not the one in force' };
    if (rules.stored.autoApprove === 'forbidden' || rules.current.autoApprove === 'forbidden') return { kind: 'close', why: 'automatic approval forbidden' };
  } else {
    const approvers = [...step.approvals[step.approvedVersion!]!];
    if (approvers.length < rules.required) return { kind: 'close', why: `${approvers.length} of ${rules.required} approvals` };
    if (approvers.some((user) => !rules.eligible(user, step.requester))) return { kind: 'close', why: 'an approver is no longer eligible' };
  }
  if (model.config.tool === 'removed') return { kind: 'close', why: 'tool removed' };
  if (model.config.tool !== step.tool) return { kind: 'close', why: `tool changed (${step.tool} → ${model.config.tool})` };
  return { kind: 'run' };
}

/** The invariant for a call that ran, judged against the model as it stands (after `resumeOutcome` said run). */
export function executionViolation(model: DModel, step: DStep, input: unknown): string | undefined {
  if (step.executed > 0) return 'ran twice';
  if (step.outcome !== 'approved' || step.approvedVersion === undefined) return `ran without approval (outcome ${step.outcome ?? 'none'})`;
  const version = step.versions[step.approvedVersion]!;
  if (JSON.stringify(version.input) !== JSON.stringify(input)) return `ran ${JSON.stringify(input)} but ${JSON.stringify(version.input)} was approved`;
  if (model.config.tool !== step.tool) return `ran on tool ${model.config.tool}, approved on ${step.tool}`;
  if (step.decidedAt! >= governingExpiry(model, step, version)) return 'approved after the deadline in force';
  const rules = governing(model, version);
  if (step.approvedByHook !== undefined) {
    if (model.config.hook !== step.approvedByHook) return `approved by hook ${step.approvedByHook}, in force: ${model.config.hook ?? 'none'}`;
    if (rules.stored.autoApprove === 'forbidden' || rules.current.autoApprove === 'forbidden') return 'hook-approved under autoApprove: forbidden';
    return undefined;
  }
  const approvers = [...step.approvals[step.approvedVersion]!];
  if (approvers.length < rules.required) return `ran with ${approvers.length} of ${rules.required} approvals`;
  const wrong = approvers.find((user) => !rules.eligible(user, step.requester));
  return wrong ? `counted ${wrong}, who may not approve` : undefined;
}
