import { CountersignError, ErrorCode } from '../../errors/countersign-error.js';
import { FencedError } from '../../store/fenced-error.js';
import type { ReplicaShortfall, StepStore } from '../../store/state-store.js';
import type { PendingStep } from '../pending-step.js';
import type { StepTransition } from './step-transition.js';

/** A step changes only a few times (one per decision), so conflicts resolve within a few rounds. */
const MAX_ATTEMPTS = 25;

/**
 * Reads the step, computes a transition from it and writes it over the revision it was computed
 * from; on a conflict (someone else changed the step meanwhile) it starts again from the new state.
 * Returns the step as written, or undefined when `compute` says there is nothing to do. Throws
 * `FencedError` when the transition's fence is no longer current. `onUnconfirmed` hears of a
 * withdrawal written but not confirmed by the replicas in time (see `ReplicaShortfall`).
 */
export async function commitTransition(
  store: Pick<StepStore, 'getStep' | 'commitStep'>,
  stepId: string,
  compute: (step: PendingStep) => StepTransition | undefined,
  options: { read?: PendingStep; onUnconfirmed?: (shortfall: ReplicaShortfall, step: PendingStep) => void } = {},
): Promise<PendingStep | undefined> {
  // A step the caller has just read is the first basis; a conflict means it changed, so read again.
  let known = options.read;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const step = known ?? (await store.getStep(stepId));
    known = undefined;
    const transition = step && compute(step);
    if (!transition) return undefined;
    const { result, unconfirmed } = await store.commitStep(transition);
    if (result === 'committed') {
      if (unconfirmed) options.onUnconfirmed?.(unconfirmed, transition.step);
      return transition.step;
    }
    if (result === 'fenced') throw new FencedError(transition.fence?.threadKey ?? step.threadKey);
    // 'expired': past the transition's `deadline` by the store's clock, so nothing to do after all.
    if (result === 'not-found' || result === 'expired') return undefined;
  }
  throw new StepContendedError({ stepId, attempts: MAX_ATTEMPTS });
}

/** Decisions on one step kept colliding until the retries ran out; the click is answered with a retry notice. */
export class StepContendedError extends CountersignError {
  override readonly name = 'StepContendedError';
  readonly code = ErrorCode.StepContended;
  readonly stepId: string;

  constructor({ stepId, attempts }: { stepId: string; attempts: number }) {
    super(`step ${stepId} kept changing; gave up after ${attempts} attempts`);
    this.stepId = stepId;
  }
}
