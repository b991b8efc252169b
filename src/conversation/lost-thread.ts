import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import { closeLostThreadTransition } from '../approvals/transitions/close-step.js';
import type { ThreadState } from '../store/thread-state.js';
import { sweepShowsLater } from './card-after-write.js';
import { postStopNotice } from './expiry-stop.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { refreshCard } from './refresh-card.js';
import { saveWithStepRetrying } from './save-with-step-retrying.js';
import type { TurnScope } from './turn-scope.js';

/** Why the approved calls of a step whose thread is gone were closed: the card shows it after "Not run:". */
const THREAD_LOST_REASON = "the thread's saved state was lost (Redis evicted or flushed it), so the turn could not go on";

/** What the thread hears. */
const THREAD_LOST_NOTICE =
  ":warning: I lost this thread's saved conversation (Redis evicted or flushed it) while the approval request waited, so I could not go on after the decision: nothing approved here was run. Mention me to start again.";

/** Why the approved calls of a step whose thread's history no longer validates were closed (see `THREAD_LOST_REASON`). */
const HISTORY_UNREADABLE_REASON = "the thread's saved history could not be read (a stored message is damaged or in a format this release does not read), so the turn could not go on";

/** What the thread hears. */
const HISTORY_UNREADABLE_NOTICE =
  ":warning: I could not read this thread's saved conversation (a stored message is damaged or in a format I do not read) after the decision, so I could not go on: nothing approved here was run. Mention me to start again.";

/**
 * How the thread a decided step waits in was lost: `lost`, its saved state is gone (`threadStateLost`);
 * `unreadable`, its history is there but fails validation (a damaged message, an older message format
 * after an upgrade), which `validatedThread` drops together with the step it waits on. A thread a newer
 * release wrote is neither: reading it throws `NewerSchemaError`, and it is left to that release.
 */
export type ThreadLoss = 'lost' | 'unreadable';

const LOSSES: Record<ThreadLoss, { reason: string; notice: string; event: string; message: string }> = {
  lost: { reason: THREAD_LOST_REASON, notice: THREAD_LOST_NOTICE, event: 'decided-step-thread-lost', message: "a decided step's thread lost its saved state (Redis evicted or flushed it); its approved calls were closed without running" },
  unreadable: {
    reason: HISTORY_UNREADABLE_REASON,
    notice: HISTORY_UNREADABLE_NOTICE,
    event: 'thread-history-unreadable',
    message: "a decided step's thread history could not be read; its approved calls were closed without running",
  },
};

/**
 * Whether, and how, the thread a decided step waits in was lost (see `ThreadLoss`): `stored`, the
 * thread as read; `validated`, as `validatedThread` made of it. Either way the turn cannot go on:
 * resumed, it would start a fresh thread and leave the step decided forever, offered again by every
 * recovery sweep and never run.
 */
export function threadLoss(stored: ThreadState | undefined, validated: ThreadState, stepId: string): ThreadLoss | undefined {
  if (threadStateLost(stored, stepId)) return 'lost';
  if (stored?.pendingStepId === stepId && validated.pendingStepId !== stepId) return 'unreadable';
  return undefined;
}

/** A decided step changes rarely: conflicts resolve within a few rounds. */
const MAX_ATTEMPTS = 25;

/**
 * Whether the thread a decided step waits in has lost its saved state: its keys are gone (Redis
 * evicted them under `maxmemory`, or someone flushed them), or only its history is (its two keys
 * are evicted one by one), which a thread that waits on a step never has empty: the model's calls
 * are in it.
 */
function threadStateLost(stored: ThreadState | undefined, stepId: string): boolean {
  return stored === undefined || (stored.pendingStepId === stepId && stored.messages.length === 0);
}

/**
 * Closes a decided step whose thread was lost (`loss`, see `ThreadLoss`), visibly: its resume is claimed under the
 * lease's fence with every approved call closed unrun by the bot (`closeLostThreadTransition`: the
 * recovery sweep stops offering it, and the audit trail records each call's closing), the card says
 * "Not run" and why, and the thread gets a short notice. The notice is saved with the claim
 * (`unpostedStopNotice`), so a process that stops before posting it leaves it, and the card's
 * update, to the one that takes the item over (`recoverInterruptedResume`). `thread`: the thread as
 * the resume read it, whatever is left of it.
 */
export async function closeLostThreadResume(options: { scope: TurnScope; step: PendingStep; thread: ThreadState; loss: ThreadLoss } & Pick<PhaseDependencies, 'store' | 'logger' | 'now'>): Promise<void> {
  const { scope, thread, store, logger } = options;
  const loss = LOSSES[options.loss];
  const decision: Decision = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: options.now(), reason: loss.reason };
  const { pendingStepId: _lost, ...rest } = thread;
  const next: ThreadState = { ...rest, messages: [], unpostedStopNotice: loss.notice };
  await saveWithStepRetrying<void>({
    scope,
    store,
    stepId: options.step.stepId,
    stepAsRead: options.step,
    maxAttempts: MAX_ATTEMPTS,
    writeFor: (step) => {
      const transition = step && closeLostThreadTransition(step, { fence: scope.lease.fence, decision });
      if (!transition) return { done: undefined };
      return {
        transition,
        thread: next,
        settled: true,
        whenCommitted: async () => {
          logger.warn({ event: loss.event, stepId: transition.step.stepId, threadKey: thread.threadKey }, loss.message);
          await refreshCard({ scope, step: transition.step, logger, store, now: options.now });
          // As a claim that closed a call (`claimAndResume`): the decision's own draw may land over this one.
          await sweepShowsLater({ store, stepId: transition.step.stepId, logger, now: options.now });
          await postStopNotice(scope, next);
        },
        whenGone: () => undefined,
      };
    },
  });
}
