import type { ApproverSpec } from '../config/policy-config-schema.js';
import { currentVersion } from './input-version.js';
import { type CardCopy, type PendingStep, undecidedCalls } from './pending-step.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

/** Where one step's card goes: the union of what the policies of its calls ask for. */
export interface StepRouting {
  /** Whether the thread's card carries the buttons (otherwise it only shows the state). */
  thread: boolean;
  channels: string[];
  /** Approvers named by user id who get a copy in a DM. */
  dmUserIds: string[];
}

/**
 * A step with several calls goes everywhere any of its calls asks to go, so no approver misses a
 * call they must decide; the thread keeps its buttons if any call wants it to. The thread's own
 * channel never gets a second copy, and the requester gets no DM for a call they may not approve.
 */
export function stepRouting(step: Pick<PendingStep, 'calls' | 'channel' | 'requesterId'>): StepRouting {
  const policies = step.calls.flatMap((call): PolicyEvaluation[] => {
    const policy = currentVersion(call)?.policy ?? call.policy;
    return policy?.needsApproval ? [policy] : [];
  });
  const thread = policies.length === 0 || policies.some((policy) => policy.notify?.thread !== false);
  const channels = new Set(policies.flatMap((policy) => policy.notify?.channels ?? []));
  channels.delete(step.channel);
  const dmUserIds = new Set(
    policies.flatMap((policy) => {
      if (!policy.notify?.dmApprovers) return [];
      return policy.approvers.flatMap((approver) =>
        approver.kind === 'user' && (approver.userId !== step.requesterId || policy.allowSelfApproval) && mayAlsoApprove(policy, approver.userId) ? [approver.userId] : [],
      );
    }),
  );
  return { thread, channels: [...channels], dmUserIds: [...dmUserIds] };
}

/**
 * Whether a named approver may be among the other rules' approvers too (`alsoApprovers`): named by
 * each, or possibly in a group it names. A dev lead that SRE's rule does not name gets no DM for a
 * list with dev and prod, which he cannot approve.
 */
function mayAlsoApprove(policy: PolicyEvaluation, userId: string): boolean {
  return (policy.alsoApprovers ?? []).every((list) => list.some((approver) => approver.kind === 'group' || approver.kind === 'channel' || (approver.kind === 'user' && approver.userId === userId)));
}

/**
 * Whether the thread's card shows buttons. It hands them to its copies only when they reach
 * everyone who may decide: a copy in every channel the rule names, and every approver of every
 * call still waiting (hops' included) reached by one, a user in a DM or an approval channel, a
 * group (or the requester) only in a channel, since DMs go to users named by id. Otherwise (a copy
 * that failed, an edit or a hop that brought approvers the copies miss) the thread keeps them, so
 * a card is never left without a way to decide it.
 */
export function threadCardActionable(step: PendingStep): boolean {
  const routing = stepRouting(step);
  const copies = step.copies ?? [];
  if (routing.thread || copies.length === 0) return true;
  const copiedChannels = new Set(copies.flatMap((copy) => (copy.kind === 'channel' ? [copy.channel] : [])));
  if (!routing.channels.every((channel) => copiedChannels.has(channel))) return true;
  // Anyone may be in an approval channel; a copy in one the rule no longer names is not counted on.
  if (routing.channels.length > 0) return false;
  const messaged = new Set(copies.flatMap((copy) => (copy.kind === 'dm' && copy.userId !== undefined ? [copy.userId] : [])));
  return waitingApprovers(step).some((approver) => approver.kind !== 'channel' && !(approver.kind === 'user' && messaged.has(approver.userId)));
}

/**
 * The approvers of the calls still waiting, as their current versions name them (hops' included),
 * but for the requester named by id where they may not approve their own request (no DM goes to them).
 */
function waitingApprovers(step: PendingStep): ApproverSpec[] {
  return undecidedCalls(step).flatMap((call) => {
    const policy = currentVersion(call)?.policy ?? call.policy;
    if (!policy?.needsApproval) return [];
    return policy.approvers.filter((approver) => policy.allowSelfApproval || approver.kind !== 'user' || approver.userId !== step.requesterId);
  });
}

/**
 * A click counts from the thread's channel or from a copy the step recorded (and, when the click
 * names its message, from that very copy): a button value carried into any other channel is refused.
 */
export function fromThisCard(step: Pick<PendingStep, 'channel' | 'copies'>, origin: { channel: string | undefined; messageTs?: string | undefined }): boolean {
  if (origin.channel === undefined) return false;
  if (origin.channel === step.channel) return true;
  const copy: CardCopy | undefined = step.copies?.find((candidate) => candidate.channel === origin.channel);
  return copy !== undefined && (origin.messageTs === undefined || origin.messageTs === copy.ts);
}
