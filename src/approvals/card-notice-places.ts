import { copyCarriesCall } from './card-routing.js';
import type { PendingCall, PendingStep } from './pending-step.js';

/** A thread to post a notice in: the card's own, or the one under a copy of it. */
export interface NoticePlace {
  channel: string;
  threadTs: string;
  /** A message of the step's there (its card, the copy itself): whatever notice of it was posted there is newer. */
  stepMessageTs: string;
}

/**
 * Where a notice about some calls of a card goes (a reminder, an escalation hop's announcement):
 * the thread, and under each channel copy that carries one of `calls`, since the approvers a rule
 * sends the card to need not be in the thread's channel (with `thread: false` they decide only
 * there). A DM copy gets it only where `inDm` says its owner is someone the notice is for, about a
 * call the copy carries (a reminder of someone who has not approved yet, not of someone a deploy
 * took off the rule).
 */
export function noticePlaces(step: PendingStep, { calls, inDm }: { calls: readonly PendingCall[]; inDm?: (userId: string, call: PendingCall) => boolean }): NoticePlace[] {
  const places: NoticePlace[] = [{ channel: step.channel, threadTs: step.threadTs, stepMessageTs: step.cardTs ?? step.threadTs }];
  for (const copy of step.copies ?? []) {
    const carried = calls.filter((call) => copyCarriesCall(step, call, copy));
    const owner = copy.userId;
    const reached = copy.kind === 'channel' ? carried.length > 0 : owner !== undefined && inDm !== undefined && carried.some((call) => inDm(owner, call));
    if (reached) places.push({ channel: copy.channel, threadTs: copy.ts, stepMessageTs: copy.ts });
  }
  return places;
}
