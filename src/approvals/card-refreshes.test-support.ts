import type { Logger } from 'pino';
import type { MessageTakeBacks } from '../conversation/message-take-back.js';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import type { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { type CardRefreshes, createCardRefreshes } from './card-refreshes.js';
import type { PendingStep } from './pending-step.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { withMissingCopies } from './post-card-copies.js';
import { applyCallAction } from './transitions/call-action.js';

type MemoryStore = ReturnType<typeof createMemoryStore>;

/** Creates `step` open in its thread (the thread's lock taken for it), kept `ttlMs`. */
export async function openStep(store: MemoryStore, step: PendingStep, ttlMs: number): Promise<void> {
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs, audit: [], fence: { threadKey: step.threadKey, token } });
}

/** A step of one request (apv-1) approved by U0LEAD, its card and copies routed as `notify` says. */
export function stepRoutedTo(notify: { thread: boolean; channels: string[] }): PendingStep {
  return makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { ...notify, dmApprovers: false } }) }]);
}

/** The channel a copy posted to `target` lands in (a DM's is named after its user). */
export function copyChannel(target: CardCopyTarget): string {
  return target.kind === 'channel' ? target.channel : `D-${target.userId}`;
}

/**
 * Card refreshes wired as create-bot wires them: before a card is drawn again, the copies its step's
 * routing asks for and lacks are posted (`withMissingCopies`, logging `failure` when that fails).
 */
export function refreshesPostingCopies(options: {
  store: MemoryStore;
  messenger: ThreadMessenger;
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
  logger: Logger;
  failure: string;
  now?: () => number;
  pause?: (ms: number) => Promise<void>;
}): CardRefreshes {
  const { failure, ...dependencies } = options;
  const { store, messenger, takeBacks, logger } = options;
  return createCardRefreshes({ ...dependencies, copies: (shown) => withMissingCopies({ store, messenger, takeBacks, logger, step: shown, failure }) });
}

/** Take-backs that only note the ts of each message taken back in `takenBack`. */
export function takingBackInto(takenBack: string[]): Pick<MessageTakeBacks, 'takeBack'> {
  return {
    async takeBack({ ts }: { ts: readonly string[] }) {
      takenBack.push(...ts);
    },
  };
}

/** An approval by UBOB, committed: the step's revision moves on. */
export async function approve(store: MemoryStore, stepId: string): Promise<void> {
  const current = (await store.getStep(stepId))!;
  const origin = { teamId: current.teamId, channel: current.channel, membership: 'member' as const };
  const result = applyCallAction(current, { stepId, approvalId: 'apv-1', userId: 'UBOB', origin, action: { kind: 'approve', version: 0 } }, { now: 1, groupMembers: new Map(), newGrantId: () => 'grant-1' });
  if (!result.ok) throw new Error(result.refusal.message);
  await store.commitStep(result.transition);
}
