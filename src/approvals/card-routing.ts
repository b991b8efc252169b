import { currentVersion } from './input-version.js';
import type { CardCopy, PendingStep } from './pending-step.js';
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
      return policy.approvers.flatMap((approver) => (approver.kind === 'user' && (approver.userId !== step.requesterId || policy.allowSelfApproval) ? [approver.userId] : []));
    }),
  );
  return { thread, channels: [...channels], dmUserIds: [...dmUserIds] };
}

/**
 * Whether the thread's card shows buttons: when the rule keeps them there, or when no copy could
 * be posted elsewhere, so a card is never left without a way to decide it.
 */
export function threadCardActionable(step: PendingStep): boolean {
  return stepRouting(step).thread || (step.copies ?? []).length === 0;
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
