import { copyCarriesCall } from './card-routing.js';
import { type CardCopy, type PendingCall, type PendingStep, undecidedCalls } from './pending-step.js';

/** A request waiting in a channel, as `/countersign pending` lists it there. */
export interface RequestWaitingHere {
  step: PendingStep;
  /** The calls the channel sees: every one where the thread is, under a copy only those it carries. */
  calls: PendingCall[];
  /** The copy of the card in the channel; absent where the thread is. */
  copy?: CardCopy;
}

/**
 * The open requests waiting in `channel`, newest first: those whose thread is there (`inThread`),
 * and those of `open` with a copy there (a rule's `notify.channels`, #approvals; a DM copy, in the
 * bot's DM with its owner) that carries a call still waiting. A copy shows its channel only the
 * calls it carries, so only those are named: a call another rule routes elsewhere stays unnamed here,
 * and a copy whose calls are all decided waits for nobody here. Pure.
 */
export function requestsWaitingIn({ channel, inThread, open }: { channel: string; inThread: readonly PendingStep[]; open: readonly PendingStep[] }): RequestWaitingHere[] {
  const waiting: RequestWaitingHere[] = inThread.map((step) => ({ step, calls: step.calls }));
  const listed = new Set(inThread.map((step) => step.stepId));
  for (const step of open) {
    if (step.phase !== 'pending' || listed.has(step.stepId) || step.channel === channel) continue;
    const copy = step.copies?.find((candidate) => candidate.channel === channel);
    if (!copy) continue;
    const carried = step.calls.filter((call) => copyCarriesCall(step, call, copy));
    const undecided = new Set(undecidedCalls(step).map((call) => call.approvalId));
    if (!carried.some((call) => undecided.has(call.approvalId))) continue;
    waiting.push({ step, calls: carried, copy });
    listed.add(step.stepId);
  }
  return waiting.sort((left, right) => right.step.createdAt - left.step.createdAt);
}
