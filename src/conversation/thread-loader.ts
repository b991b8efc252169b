import type { Logger } from 'pino';
import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import { parseHistory } from '../agent/history.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { closeStepTransition } from '../approvals/transitions/close-step.js';
import { logUnconfirmedWithdrawal } from '../approvals/unconfirmed-withdrawal.js';
import { isFencedError } from '../store/fenced-error.js';
import { newThreadState, threadKeyOf, type ThreadAddress, type ThreadState } from '../store/thread-state.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { refreshCard } from './refresh-card.js';
import type { TurnScope } from './turn-scope.js';

/** `scope`: the work item's, when the step a dropped history's card waited on is closed; its card then says so. */
export type LoadThread = (address: ThreadAddress, scope?: TurnScope) => Promise<ThreadState>;

/**
 * A message's take-in reads its thread and whether the message was deleted while it waited, in one
 * store round trip (`getThreadAndDeletion`); the thread is validated as `LoadThread` does.
 */
export type LoadMessageThread = (item: ThreadAddress & { ts: string }, scope: TurnScope) => Promise<{ thread: ThreadState; deleted: boolean }>;

/**
 * Reads a thread, its history validated as untrusted: a history that fails validation starts fresh.
 * The step its card waits on is then closed in the store (its buttons decide nothing more, and the
 * card says why), since the calls it asks about went with the history.
 */
export function createThreadLoader(dependencies: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>): LoadThread {
  const settle = createStoredThreadSettler(dependencies);
  return async (address, scope) => settle(address, await dependencies.store.getThread(threadKeyOf(address)), scope);
}

/** `LoadThread` for a message's take-in, with the deleted-message check in the same round trip. */
export function createMessageThreadLoader(dependencies: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>): LoadMessageThread {
  const settle = createStoredThreadSettler(dependencies);
  return async (item, scope) => {
    const read = await dependencies.store.getThreadAndDeletion(threadKeyOf(item), { channel: item.channel, ts: item.ts });
    return { thread: await settle(item, read.thread, scope), deleted: read.deleted };
  };
}

function createStoredThreadSettler({ store, logger, now }: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>) {
  async function closeDroppedStep(stepId: string, scope: TurnScope | undefined): Promise<void> {
    const decision = { outcome: 'denied' as const, userId: COUNTERSIGN_ACTOR, at: now(), reason: "the thread's stored history could not be read, so the calls it asked about are gone" };
    const close = () =>
      commitTransition(store, stepId, (step) => {
        const transition = closeStepTransition(step, decision);
        return transition && (scope ? { ...transition, fence: scope.lease.fence } : transition);
      }, { onUnconfirmed: logUnconfirmedWithdrawal(logger) });
    let closed: PendingStep | undefined;
    try {
      closed = await (scope ? scope.lease.guard(close) : close());
    } catch (error) {
      if (isFencedError(error)) throw error;
      // Left pending, it decides nothing: the thread no longer waits on it, so its resume finds nothing to do.
      logger.warn({ event: 'dropped-step-close-failed', stepId, err: error }, 'could not close the step of a history that failed validation');
    }
    if (closed && scope) await refreshCard({ scope, step: closed, logger, store, now });
  }

  return async (address: ThreadAddress, stored: ThreadState | undefined, scope: TurnScope | undefined): Promise<ThreadState> => {
    const thread = validatedThread({ address, stored, logger, now });
    if (stored?.pendingStepId !== undefined && thread.pendingStepId === undefined) await closeDroppedStep(stored.pendingStepId, scope);
    return thread;
  };
}

/**
 * A thread as read from the store (undefined: not followed yet), its history validated as untrusted.
 * A history that fails validation is dropped with what refers to its calls: the step a card waits
 * on (resumed or closed, it would answer calls no longer in the history, and every later request
 * would carry results without their calls, which the model APIs refuse), the failed turn Try again
 * would replay, and who steered that turn.
 */
export function validatedThread(options: { address: ThreadAddress; stored: ThreadState | undefined; logger: Logger; now: () => number }): ThreadState {
  const { address, stored } = options;
  if (!stored) return newThreadState(address, options.now());
  const history = parseHistory(stored.messages);
  if (history.valid) return { ...stored, messages: history.messages };
  options.logger.warn({ event: 'history-invalid', threadKey: threadKeyOf(address) }, 'stored history failed validation; starting fresh');
  const { pendingStepId: _step, failedTurn: _failed, instigatorIds: _instigators, ...rest } = stored;
  // The dropped history's call ids are unknown from here: new calls get fresh ones (see `callIdsForgotten`).
  return { ...rest, messages: [], callIdsForgotten: true };
}
