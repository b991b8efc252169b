import type { PendingStep } from '../approvals/pending-step.js';
import { StepContendedError } from '../approvals/transitions/commit-transition.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import type { StateStore } from '../store/state-store.js';
import type { ThreadState } from '../store/thread-state.js';
import type { TurnScope } from './turn-scope.js';

/**
 * What one try makes of the step as read: nothing to write (`done`: what the caller answers), or a
 * write of the step with the thread (`saveWithStep`).
 */
export type StepWithThreadWrite<RESULT> =
  | { done: RESULT }
  | {
      transition: StepTransition;
      thread: ThreadState;
      settled?: boolean;
      /** What the caller answers once the write landed (its logs, the card, the thread's own copy). */
      whenCommitted: () => RESULT | Promise<RESULT>;
      /** What the caller answers when the step was gone at the write; without it, the step is read again, as one that moved. */
      whenGone?: () => RESULT | Promise<RESULT>;
    };

/**
 * Writes a step transition with the thread (`TurnScope.saveWithStep`), built from the step as read
 * (`writeFor`), and, when the step moved meanwhile (the write's `fromRevision` no longer holds), reads
 * it again and builds the write anew. `stepAsRead`: the step the caller read already, for the first
 * try. Bounded: a step that keeps moving under the writer (clicks, edits, another process's sweep)
 * must fail the turn (`StepContendedError`) rather than hold its thread's lease in a loop forever.
 */
export async function saveWithStepRetrying<RESULT>({
  scope,
  store,
  stepId,
  stepAsRead,
  maxAttempts,
  writeFor,
}: {
  scope: Pick<TurnScope, 'saveWithStep'>;
  store: Pick<StateStore, 'getStep'>;
  stepId: string;
  stepAsRead?: PendingStep | undefined;
  maxAttempts: number;
  writeFor: (step: PendingStep | undefined) => StepWithThreadWrite<RESULT> | Promise<StepWithThreadWrite<RESULT>>;
}): Promise<RESULT> {
  let known = stepAsRead;
  for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
    const step = known ?? (await store.getStep(stepId));
    known = undefined;
    const write = await writeFor(step);
    if ('done' in write) return write.done;
    const result = await scope.saveWithStep(write.transition, write.thread, { settled: write.settled });
    if (result === 'committed') return write.whenCommitted();
    if (result === 'not-found' && write.whenGone) return write.whenGone();
    // Changed since it was read (or gone, for a caller that reads it again then): read again.
  }
  throw new StepContendedError({ stepId, attempts: maxAttempts });
}
