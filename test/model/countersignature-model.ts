import { ONCALL_MEMBERS, type Input, type PolicySpec, type RuleSpec } from './countersignature-world.js';

/**
 * The reference model: what the countersignature promises, written as plainly as possible and
 * sharing no code with the bot. A call's input versions, who approved which version, a clock.
 */
export interface ModelStep {
  stepId: string;
  requester: string;
  threadTs: string;
  question: boolean;
  /** When the call was proposed: every rule's expiry counts from here, an edit's too. */
  requestedAt: number;
  expiresAt: number;
  state: 'pending' | 'complete' | 'superseded' | 'resumed';
  outcome?: 'approved' | 'denied' | 'answered' | 'expired' | 'superseded';
  /** Index = version number; 0 is the model's input. */
  versions: Input[];
  /** Per version: the people whose approval of exactly that version counted. */
  approvals: Array<Set<string>>;
  approvedVersion?: number;
  executed: number;
}

export interface ModelGrant {
  grantor: string;
  rule: 'prod' | 'other';
  input: Input;
  scope: 'thread' | 'channel';
  threadTs: string;
  identical: boolean;
  expiresAt: number;
}

export interface Model {
  spec: PolicySpec;
  now: number;
  steps: ModelStep[];
  grants: ModelGrant[];
}

export const ruleName = (input: Input): 'prod' | 'other' => (input.namespace === 'prod' ? 'prod' : 'other');
export const ruleOf = (model: Model, input: Input): RuleSpec => model.spec[ruleName(input)];
export const sameInput = (left: Input, right: Input) => left.service === right.service && left.namespace === right.namespace;

/** May `user` countersign under `rule` for a call `requester` asked for? */
export function eligible(rule: RuleSpec, user: string, requester: string): boolean {
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

export type ClickKind = 'approve' | 'deny' | 'edit' | 'grant' | 'answer';
export interface Click {
  kind: ClickKind;
  user: string;
  /** `previous`: the card before the latest edit. */
  version: 'current' | 'previous';
  /** `other-organisation`: a partner organisation's member clicking in a Slack Connect channel. */
  origin: 'same' | 'other-team' | 'other-channel' | 'other-organisation';
  input: Input;
  grant: { scope: 'thread' | 'channel'; hours: 1 | 4; identical: boolean };
}

/** Whether the promise allows this click on this step now; `expired` when the clock says no. */
export function allows(model: Model, step: ModelStep, click: Click): { allowed: boolean; expired?: boolean } {
  if (click.origin !== 'same' || step.state !== 'pending' || step.outcome !== undefined) return { allowed: false };
  if (model.now >= step.expiresAt) return { allowed: false, expired: true };
  if (step.question) return { allowed: (click.kind === 'answer' || click.kind === 'deny') && click.user === step.requester };
  const current = step.versions.length - 1;
  const rule = ruleOf(model, step.versions[current]!);
  const clicked = click.version === 'previous' && current > 0 ? current - 1 : current;
  switch (click.kind) {
    case 'answer':
      return { allowed: false };
    case 'deny':
      return { allowed: click.user === step.requester || step.approvals[current]!.has(click.user) || eligible(rule, click.user, step.requester) };
    case 'approve':
    case 'grant': {
      if (clicked !== current || !eligible(rule, click.user, step.requester) || step.approvals[current]!.has(click.user)) return { allowed: false };
      if (click.kind === 'grant' && (rule.required > 1 || rule.grants === 'forbidden')) return { allowed: false };
      return { allowed: true };
    }
    case 'edit': {
      if (clicked !== current || !eligible(rule, click.user, step.requester)) return { allowed: false };
      // An edit to the same input is an approval of it.
      if (sameInput(click.input, step.versions[current]!)) return { allowed: !step.approvals[current]!.has(click.user) };
      // The new input's rule counts from the request: past its expiry, the edit is refused.
      return { allowed: model.now < editedExpiry(model, step, click.input) };
    }
  }
}

/** Applies an allowed click to the model. */
export function applyClick(model: Model, step: ModelStep, click: Click): void {
  const approve = (version: number) => {
    step.approvals[version]!.add(click.user);
    if (step.approvals[version]!.size >= ruleOf(model, step.versions[version]!).required) {
      step.outcome = 'approved';
      step.approvedVersion = version;
      step.state = 'complete';
    }
  };
  if (click.kind === 'deny' || click.kind === 'answer') {
    step.outcome = click.kind === 'deny' ? 'denied' : 'answered';
    step.state = 'complete';
    return;
  }
  const current = step.versions.length - 1;
  if (click.kind === 'edit' && !sameInput(click.input, step.versions[current]!)) {
    step.expiresAt = editedExpiry(model, step, click.input);
    step.versions.push(click.input);
    step.approvals.push(new Set());
    if (eligible(ruleOf(model, click.input), click.user, step.requester)) approve(current + 1);
    return;
  }
  approve(current);
  if (click.kind === 'grant') {
    const input = step.versions[current]!;
    const rule = ruleOf(model, input);
    model.grants.push({
      grantor: click.user,
      rule: ruleName(input),
      input,
      scope: click.grant.scope,
      threadTs: step.threadTs,
      identical: click.grant.identical || rule.grants === 'identicalArguments',
      expiresAt: model.now + click.grant.hours * 3_600_000,
    });
  }
}

/** A step's expiry once edited to `input`: never later than before, nor than `input`'s rule allows from the request. */
function editedExpiry(model: Model, step: ModelStep, input: Input): number {
  return Math.min(step.expiresAt, step.requestedAt + ruleOf(model, input).expiryMinutes * 60_000);
}

/** Whether a live grant stands in for a person on a new call: one person's approval, carried forward, never wider. */
export function coveringGrant(model: Model, call: { requester: string; threadTs: string; input: Input }): ModelGrant | undefined {
  const rule = ruleOf(model, call.input);
  return model.grants.find(
    (grant) =>
      grant.expiresAt > model.now &&
      (grant.scope === 'channel' || grant.threadTs === call.threadTs) &&
      grant.rule === ruleName(call.input) &&
      rule.required === 1 &&
      rule.grants !== 'forbidden' &&
      (!(grant.identical || rule.grants === 'identicalArguments') || sameInput(grant.input, call.input)) &&
      eligible(rule, grant.grantor, call.requester),
  );
}

/**
 * The invariant for a call that ran after its step: it was approved, as exactly this input, by at
 * least the number of distinct people the rule for this input requires, each allowed to; and it
 * had not run before. Returns what is wrong, or undefined.
 */
export function executionViolation(model: Model, step: ModelStep, input: unknown): string | undefined {
  if (step.executed > 0) return 'ran twice';
  if (step.outcome !== 'approved' || step.approvedVersion === undefined) return `ran without approval (outcome ${step.outcome ?? 'none'})`;
  const version = step.versions[step.approvedVersion]!;
  if (JSON.stringify(version) !== JSON.stringify(input)) return `ran ${JSON.stringify(input)} but ${JSON.stringify(version)} was approved`;
  const rule = ruleOf(model, version);
  const approvers = [...step.approvals[step.approvedVersion]!];
  if (approvers.length < rule.required) return `ran with ${approvers.length} of ${rule.required} approvals`;
  const wrong = approvers.find((user) => !eligible(rule, user, step.requester));
  return wrong ? `counted ${wrong}, who may not approve` : undefined;
}
