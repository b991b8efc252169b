import { deciderText } from './approval-hook.js';
import type { StateStore } from '../store/state-store.js';
import type { PendingCall, PendingStep } from './pending-step.js';

export type CallLookup =
  | { open: true; step: PendingStep; call: PendingCall }
  | { open: false; step?: PendingStep; call?: PendingCall; message: string };

/**
 * The call a button or modal refers to, and whether it can still be decided. The reference comes
 * from Slack (untrusted), so a missing step or call is an ordinary answer, not an error.
 */
export async function findCall(store: StateStore, reference: { stepId: string; approvalId: string }): Promise<CallLookup> {
  const step = await store.getStep(reference.stepId);
  const call = step?.calls.find((candidate) => candidate.approvalId === reference.approvalId);
  if (!step || !call) return { open: false, message: 'This approval request is no longer open.' };
  const decision = Object.hasOwn(step.decisions, call.approvalId) ? step.decisions[call.approvalId] : undefined;
  if (decision) return { open: false, step, call, message: `This call was already decided by ${deciderText(decision.userId)}.` };
  if (step.phase !== 'pending') return { open: false, step, call, message: 'This approval request was already closed.' };
  return { open: true, step, call };
}
