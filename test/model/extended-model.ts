import { ONCALL_MEMBERS, type Input, type PolicySpec, type RuleSpec } from './countersignature-world.js';
import { ruleName, sameInput, type Click } from './countersignature-model.js';

/**
 * The reference model, extended with the approving group as it changes (and whether Slack answers
 * for it), grants that can be revoked while the calls they let through wait to start, and the
 * re-check at resume (revoked approvals, approvals that wait for the group and are closed after 5
 * minutes). Shares no code with the bot.
 */
export const PATIENCE_MS = 5 * 60_000;
export const SLOT_MS = 20_000;

export interface XStep {
  stepId: string;
  requester: string;
  threadTs: string;
  question: boolean;
  createdAt: number;
  expiresAt: number;
  state: 'pending' | 'complete' | 'superseded' | 'resumed';
  outcome?: 'approved' | 'denied' | 'answered' | 'expired' | 'superseded';
  versions: Input[];
  approvals: Array<Set<string>>;
  approvedVersion?: number;
  decidedAt?: number;
  /** Slots of 20 s (from the decision) in which a resume already read the group. */
  readSlots: Set<number>;
  executed: number;
}

export interface XGrant {
  grantId?: string;
  grantor: string;
  rule: 'prod' | 'other';
  input: Input;
  scope: 'thread' | 'channel';
  threadTs: string;
  identical: boolean;
  expiresAt: number;
  revoked: boolean;
}

export interface XQueued {
  id: number;
  grant: XGrant;
  requester: string;
  threadTs: string;
  input: Input;
}

export interface XModel {
  spec: PolicySpec;
  now: number;
  steps: XStep[];
  grants: XGrant[];
  queued: XQueued[];
  groups: { readable: boolean; members: Set<string> };
}

export const newGroups = () => ({ readable: true, members: new Set(ONCALL_MEMBERS) });
export const ruleOf = (model: XModel, input: Input): RuleSpec => model.spec[ruleName(input)];

/** May `user` countersign under `rule` now (the group as Slack tells it now; unread = nobody)? */
export function eligibleNow(model: XModel, rule: RuleSpec, user: string, requester: string): boolean {
  if (user === requester && !rule.allowSelfApproval) return false;
  switch (rule.approvers.kind) {
    case 'channel':
      return true;
    case 'group':
      return model.groups.readable && model.groups.members.has(user);
    case 'users':
      return rule.approvers.users.includes(user);
  }
}

export function allowsX(model: XModel, step: XStep, click: Click): { allowed: boolean; expired?: boolean } {
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
      return { allowed: click.user === step.requester || step.approvals[current]!.has(click.user) || eligibleNow(model, rule, click.user, step.requester) };
    case 'approve':
    case 'grant': {
      if (clicked !== current || !eligibleNow(model, rule, click.user, step.requester) || step.approvals[current]!.has(click.user)) return { allowed: false };
      if (click.kind === 'grant' && (rule.required > 1 || rule.grants === 'forbidden')) return { allowed: false };
      return { allowed: true };
    }
    case 'edit': {
      if (clicked !== current || !eligibleNow(model, rule, click.user, step.requester)) return { allowed: false };
      if (sameInput(click.input, step.versions[current]!)) return { allowed: !step.approvals[current]!.has(click.user) };
      // The new input's rule counts from the request: past its expiry, the edit is refused.
      return { allowed: model.now < editedExpiry(model, step, click.input) };
    }
  }
}

/** A step's expiry once edited to `input`: never later than before, nor than `input`'s rule allows from the request. */
function editedExpiry(model: XModel, step: XStep, input: Input): number {
  return Math.min(step.expiresAt, step.createdAt + ruleOf(model, input).expiryMinutes * 60_000);
}

export function applyClickX(model: XModel, step: XStep, click: Click): XGrant | undefined {
  const approve = (version: number) => {
    // The click counts only earlier approvals that still hold (as the resume would); a lapsed one comes
    // off the step. With the group unreadable nothing is known to have lapsed, so they all still count.
    const rule = ruleOf(model, step.versions[version]!);
    if (model.groups.readable) {
      for (const user of [...step.approvals[version]!]) if (!eligibleNow(model, rule, user, step.requester)) step.approvals[version]!.delete(user);
    }
    step.approvals[version]!.add(click.user);
    if (step.approvals[version]!.size >= ruleOf(model, step.versions[version]!).required) {
      step.outcome = 'approved';
      step.approvedVersion = version;
      step.state = 'complete';
      step.decidedAt = model.now;
    }
  };
  if (click.kind === 'deny' || click.kind === 'answer') {
    step.outcome = click.kind === 'deny' ? 'denied' : 'answered';
    step.state = 'complete';
    step.decidedAt = model.now;
    return undefined;
  }
  const current = step.versions.length - 1;
  if (click.kind === 'edit' && !sameInput(click.input, step.versions[current]!)) {
    step.expiresAt = editedExpiry(model, step, click.input);
    step.versions.push(click.input);
    step.approvals.push(new Set());
    if (eligibleNow(model, ruleOf(model, click.input), click.user, step.requester)) approve(current + 1);
    return undefined;
  }
  approve(current);
  if (click.kind !== 'grant') return undefined;
  const input = step.versions[current]!;
  const rule = ruleOf(model, input);
  const grant: XGrant = {
    grantor: click.user,
    rule: ruleName(input),
    input,
    scope: click.grant.scope,
    threadTs: step.threadTs,
    identical: click.grant.identical || rule.grants === 'identicalArguments',
    expiresAt: model.now + click.grant.hours * 3_600_000,
    revoked: false,
  };
  model.grants.push(grant);
  return grant;
}

/** Whether `grant` stands in for a person on this call now. */
export function covers(model: XModel, grant: XGrant, call: { requester: string; threadTs: string; input: Input }): boolean {
  const rule = ruleOf(model, call.input);
  return (
    !grant.revoked &&
    grant.expiresAt > model.now &&
    (grant.scope === 'channel' || grant.threadTs === call.threadTs) &&
    grant.rule === ruleName(call.input) &&
    rule.required === 1 &&
    rule.grants !== 'forbidden' &&
    (!(grant.identical || rule.grants === 'identicalArguments') || sameInput(grant.input, call.input)) &&
    eligibleNow(model, rule, grant.grantor, call.requester)
  );
}

export const coveringGrantX = (model: XModel, call: { requester: string; threadTs: string; input: Input }) => model.grants.filter((grant) => covers(model, grant, call));

/**
 * What a resume of a decided step must do now: run the approved call (only when every approval is
 * confirmed against the group as Slack tells it now), close it (an approver who left; a group
 * unread past the patience, or at once for a newer message), or wait (unread group, patience left,
 * or the group already read in this 20 s slot).
 */
export function resumeOutcome(model: XModel, step: XStep, { waits }: { waits: boolean }): 'run' | 'close' | 'wait' | 'nothing-runs' | 'no-op' {
  if (step.state !== 'complete') return 'no-op';
  if (step.outcome !== 'approved') return 'nothing-runs';
  const version = step.versions[step.approvedVersion!]!;
  const rule = ruleOf(model, version);
  const approvers = [...step.approvals[step.approvedVersion!]!];
  if (approvers.some((user) => user === step.requester && !rule.allowSelfApproval)) return 'close';
  if (rule.approvers.kind !== 'group') return 'run';
  const decidedAt = Math.max(step.createdAt, step.decidedAt!);
  let readable = model.groups.readable;
  if (waits) {
    const slot = Math.max(0, Math.floor((model.now - decidedAt) / SLOT_MS));
    if (step.readSlots.has(slot)) return 'wait';
    step.readSlots.add(slot);
  }
  if (readable && approvers.every((user) => model.groups.members.has(user))) return 'run';
  if (readable) return 'close';
  readable = false;
  if (waits && model.now - decidedAt < PATIENCE_MS) return 'wait';
  return 'close';
}
