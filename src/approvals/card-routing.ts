import type { ApproverSpec } from '../config/policy-config-schema.js';
import { currentVersion } from './input-version.js';
import { type CardCopy, type PendingCall, type PendingStep, undecidedCalls } from './pending-step.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

/** Where a card goes: for one call, what its rule asks for; for a step, the union over its calls. */
export interface StepRouting {
  /** Whether the thread's card carries the buttons (otherwise it only shows the state). */
  thread: boolean;
  channels: string[];
  /** Approvers named by user id who get a copy in a DM. */
  dmUserIds: string[];
}

/**
 * A step with several calls goes everywhere any of its calls asks to go, so no approver misses a
 * call they must decide. The thread's own channel never gets a second copy, and the requester gets
 * no DM for a call they may not approve.
 */
export function stepRouting(step: Pick<PendingStep, 'calls' | 'channel' | 'requesterId'>): StepRouting {
  const routings = step.calls.flatMap((call) => callRouting(step, call) ?? []);
  const thread = routings.length === 0 || routings.some((routing) => routing.thread);
  const channels = new Set(routings.flatMap((routing) => routing.channels));
  const dmUserIds = new Set(routings.flatMap((routing) => routing.dmUserIds));
  return { thread, channels: [...channels], dmUserIds: [...dmUserIds] };
}

/**
 * Whether the step's card has copies to link back to it, so its permalink is wanted: its routing
 * asks for any, or it has some already (posted under an earlier version's rule). Every place that
 * records a thread card (first posted, found, or posted again) asks this one question: a card
 * recorded without its link (Slack would not give it) must not keep a card posted again later
 * from getting one.
 */
export function copiesLinkToCard(step: Pick<PendingStep, 'calls' | 'channel' | 'requesterId' | 'copies'>): boolean {
  if ((step.copies ?? []).length > 0) return true;
  const routing = stepRouting(step);
  return routing.channels.length + routing.dmUserIds.length > 0;
}

/**
 * Whether the step's routing asks for a copy it has none on record of (a channel, a DM approver):
 * one may be posted and recorded at any moment (the turn's, a card refresh's, an escalation hop's),
 * outside the step's revision. A DM that `dmsLetDecide` leaves out counts as asked for: this errs
 * towards expecting a copy.
 */
export function awaitsCopies(step: Pick<PendingStep, 'calls' | 'channel' | 'requesterId' | 'copies'>): boolean {
  const missing = missingCopyTargets(step);
  return missing.channels.length + missing.dmUserIds.length > 0;
}

/** The channels and DM approvers the step's routing asks for a copy in and it has none on record of. */
export function missingCopyTargets(step: Pick<PendingStep, 'calls' | 'channel' | 'requesterId' | 'copies'>): { channels: string[]; dmUserIds: string[] } {
  const routing = stepRouting(step);
  const copies = step.copies ?? [];
  return {
    channels: routing.channels.filter((channel) => !copies.some((copy) => copy.kind === 'channel' && copy.channel === channel)),
    dmUserIds: routing.dmUserIds.filter((userId) => !copies.some((copy) => copy.kind === 'dm' && copy.userId === userId)),
  };
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
 * Where one call's card goes, by the rule of its current version (an edit's, with a hop's
 * approvers); undefined for a call that waits for no approval (a question), which stays in the thread.
 */
export function callRouting(step: Pick<PendingStep, 'channel' | 'requesterId'>, call: PendingCall): StepRouting | undefined {
  const policy = policyOf(call);
  if (!policy) return undefined;
  const channels = (policy.notify?.channels ?? []).filter((channel) => channel !== step.channel);
  const dmUserIds = policy.notify?.dmApprovers
    ? policy.approvers.flatMap((approver) => (approver.kind === 'user' && (approver.userId !== step.requesterId || policy.allowSelfApproval) && mayAlsoApprove(policy, approver.userId) ? [approver.userId] : []))
    : [];
  return { thread: policy.notify?.thread !== false, channels: [...new Set(channels)], dmUserIds: [...new Set(dmUserIds)] };
}

/**
 * Whether the thread's card shows any buttons: for a call still waiting that keeps them there
 * (`threadCallActionable`). Once none waits, whether the routing hands them elsewhere at all.
 */
export function threadCardActionable(step: PendingStep): boolean {
  const waiting = undecidedCalls(step);
  if (waiting.length === 0) return stepRouting(step).thread || (step.copies ?? []).length === 0;
  return waiting.some((call) => threadCallActionable(step, call));
}

/**
 * Whether the thread's card shows buttons for `call`. It hands them to the copies only when the
 * call's own routing reached everyone who may decide it: a copy in every channel its rule names,
 * and every approver of the call (hops' included) reached by one, a user in a DM or one of those
 * channels, a group (or the requester) only in a channel, since DMs go to users named by id.
 * Another rule's copy reaches none of them: its channel is where that rule's approvers decide.
 * Otherwise (a copy that failed, an edit or a hop that brought approvers the copies miss) the
 * thread keeps them, so a call is never left without a way to decide it.
 */
export function threadCallActionable(step: PendingStep, call: PendingCall): boolean {
  const routing = callRouting(step, call);
  const copies = step.copies ?? [];
  if (!routing || routing.thread || copies.length === 0) return true;
  const copiedChannels = new Set(copies.flatMap((copy) => (copy.kind === 'channel' ? [copy.channel] : [])));
  if (!routing.channels.every((channel) => copiedChannels.has(channel))) return true;
  // Anyone may be in an approval channel; a copy in one the rule does not name is not counted on.
  if (routing.channels.length > 0) return false;
  const messaged = new Set(copies.flatMap((copy) => (copy.kind === 'dm' && copy.userId !== undefined ? [copy.userId] : [])));
  return approversOf(step, call).some((approver) => approver.kind !== 'channel' && !(approver.kind === 'user' && messaged.has(approver.userId)));
}

/** Where a copy of the card is: a channel, or a DM to one approver (unknown for a DM copy recorded without its owner). */
export interface CopyPlace {
  kind: 'channel' | 'dm';
  channel?: string;
  userId?: string | undefined;
}

/**
 * Whether the copy at `place` carries `call`: only where the call's own rule sends it, so a copy
 * shows (to everyone in its channel) the input of no call another rule routes elsewhere, nor offers
 * buttons for it. A DM copy recorded without its owner carries every call, as it always did.
 */
export function copyCarriesCall(step: Pick<PendingStep, 'channel' | 'requesterId'>, call: PendingCall, place: CopyPlace): boolean {
  const routing = callRouting(step, call);
  if (!routing) return false;
  if (place.kind === 'channel') return place.channel !== undefined && routing.channels.includes(place.channel);
  return place.userId === undefined || routing.dmUserIds.includes(place.userId);
}

/** The policy a call waits under now, when it asks for approval at all. */
function policyOf(call: PendingCall): PolicyEvaluation | undefined {
  const policy = currentVersion(call)?.policy ?? call.policy;
  return policy?.needsApproval ? policy : undefined;
}

/**
 * The approvers of a call, as its current version names them (hops' included), but for the
 * requester named by id where they may not approve their own request (no DM goes to them).
 */
function approversOf(step: PendingStep, call: PendingCall): ApproverSpec[] {
  const policy = policyOf(call);
  if (!policy) return [];
  return policy.approvers.filter((approver) => policy.allowSelfApproval || approver.kind !== 'user' || approver.userId !== step.requesterId);
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
