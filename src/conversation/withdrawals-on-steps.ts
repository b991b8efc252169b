import { decisionOf, type Decision, type PendingStep } from '../approvals/pending-step.js';
import { rejudgeResumeTransition } from '../approvals/transitions/close-step.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { ThreadState } from '../store/thread-state.js';
import { writeThenShowCard } from './card-after-write.js';
import type { Withdrawal } from './carried-approvals.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { type StepWithThreadWrite, saveWithStepRetrying } from './save-with-step-retrying.js';
import type { TurnScope } from './turn-scope.js';

/** A resumed step is written only by holders of its thread, and this one holds it: a conflict is all but impossible. */
const MAX_ATTEMPTS = 5;

/**
 * Saves a thread that withdraws carried approvals (Try again found they no longer hold), with their
 * `audit`, and closes each on its step as a resume claim that finds an approval revoked does, so its
 * card says "Not run" and why rather than "Approved by …" of a call that will never run. The thread
 * and the audit go in the first step's write (or a plain save when no step is left to write), so
 * the history never says "no longer holds" while the trail says only "approved"; the card is
 * shown after each step's write, crash-safely (`writeThenShowCard`). A failed turn carries the
 * approvals of one step in practice: with several, a process stopping between their writes leaves
 * the later steps' cards as they were.
 */
export function createWithdrawalsOnSteps({ store, logger, now }: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>) {
  return async function saveWithdrawals(scope: TurnScope, thread: ThreadState, { withdrawn, audit }: { withdrawn: readonly Withdrawal[]; audit: readonly AuditEventInput[] }): Promise<void> {
    const closing = new Map<string, Record<string, Decision>>();
    for (const { approval, closing: decision } of withdrawn) {
      if (decision) closing.set(approval.stepId, { ...closing.get(approval.stepId), [approval.approvalId]: decision });
    }
    let unsaved = true;
    for (const [stepId, decisions] of closing) {
      await writeThenShowCard({ scope, store, stepId, logger, now }, async () => {
        const written = await closeOnStep(scope, thread, { stepId, decisions, audit: unsaved ? audit : [] });
        if (written) unsaved = false;
        return written;
      });
    }
    if (unsaved) await scope.save(thread, { audit });
  };

  /** The step as written with the thread, or undefined when it no longer records any of these approvals (gone, or closed since). */
  function closeOnStep(scope: TurnScope, thread: ThreadState, { stepId, decisions, audit }: { stepId: string; decisions: Readonly<Record<string, Decision>>; audit: readonly AuditEventInput[] }): Promise<PendingStep | undefined> {
    const writeFor = (step: PendingStep | undefined): StepWithThreadWrite<PendingStep | undefined> => {
      if (step?.threadKey !== thread.threadKey) return { done: undefined };
      const still = Object.fromEntries(Object.entries(decisions).filter(([approvalId]) => decisionOf(step, approvalId)?.outcome === 'approved'));
      const transition = Object.keys(still).length === 0 ? undefined : rejudgeResumeTransition(step, { fence: scope.lease.fence, decisions: still });
      if (!transition) return { done: undefined };
      return { transition: { ...transition, audit: [...audit] }, thread, whenCommitted: () => transition.step, whenGone: () => undefined };
    };
    return saveWithStepRetrying({ scope, store, stepId, maxAttempts: MAX_ATTEMPTS, writeFor });
  }
}
