import { FencedError, isFencedError } from '../store/fenced-error.js';
import type { Fence, FenceState, WorkQueueStore } from '../store/state-store.js';
import { StateLostError } from './state-lost-error.js';

/**
 * A drain's hold on its thread: the fencing token every guarded write carries, a check for effects
 * Redis cannot guard itself (a Slack post), and a signal that aborts the turn (its model calls and
 * tools) as soon as this process learns another holder took the thread.
 */
export interface Lease {
  readonly fence: Fence;
  /** Aborted once this process knows it no longer holds the thread, or that Redis lost its state. */
  readonly signal: AbortSignal;
  /**
   * Taken by the recovery sweep (`recoverStalledWork`), or taken with an item a holder whose lock
   * lapsed left in flight (`WorkClaim.leftover`, whatever took the lock: a new message, a click):
   * the thread's work had no live holder, most often left by a process that stopped mid-item, whose
   * effects after its last write (a card it never drew) are this holder's to show.
   */
  readonly recovered?: boolean;
  /**
   * Asks Redis whether the token is still the thread's newest and throws `FencedError` otherwise
   * (`StateLostError` when the token is gone with no other in its place), so a process that stalled
   * past its lock stops before posting rather than after.
   */
  assertCurrent(): Promise<void>;
  /**
   * Like `assertCurrent`, without a round trip while the lock this process last renewed cannot
   * have lapsed (by its own clock, measured from before the renewal was sent): nobody else can
   * hold the thread yet. Before each Slack write and each tool run, where a stall must be caught
   * but a round trip each time would be waste.
   */
  assertHeld(): Promise<void>;
  /**
   * Runs a fenced write; a `FencedError` from it ends the lease. Refused because the token is gone
   * (not replaced), it throws `StateLostError` instead: what the write was to record stays, since
   * no new holder will show it again (see `takingBackIfFenced`).
   */
  guard<T>(write: () => Promise<T>): Promise<T>;
  /** True once this process knows it must stop: another holder took the thread, or Redis lost its state. */
  lost(): boolean;
  /**
   * True while what ended (or is ending) the lease is Redis having lost the thread's state, not
   * another holder: the turn stops all the same, but may tell the thread (`state-lost-notice.ts`).
   * False again once another holder is known to have taken the thread since.
   */
  stateLost(): boolean;
}

export function createLease(options: {
  store: Pick<WorkQueueStore, 'fenceState'>;
  fence: Fence;
  /** Until when (epoch ms, by this process's clock) the lock was last known to be ours. */
  heldUntil: () => number;
  now?: () => number;
  /** Told once, when this lease first learns Redis lost the thread's state. */
  onStateLost?: () => void;
  /** See `Lease.recovered`. */
  recovered?: boolean;
}): Lease & { markLost(): void; markMissing(): void; settleRefusal(): Promise<void> } {
  const { store, fence, now = Date.now } = options;
  const controller = new AbortController();
  // `missing`: the token is gone and no other holder is known; `fenced`: another holder took the thread.
  let fate: 'held' | 'missing' | 'fenced' = 'held';
  const markLost = () => {
    fate = 'fenced';
    if (!controller.signal.aborted) controller.abort(new FencedError(fence.threadKey));
  };
  /**
   * The token is gone (a renewal found none). Not aborted here: a tool or model call under way
   * finishes (killing a migration half-way because Redis restarted would be the worst outcome), and
   * the next check (before a post, a tool start, after a tool ran) or write ends the turn.
   */
  const markMissing = () => {
    if (fate !== 'held') return;
    fate = 'missing';
    options.onStateLost?.();
  };
  const stopped = () => (fate === 'missing' ? new StateLostError(fence.threadKey) : new FencedError(fence.threadKey));
  /** Another holder has the thread (`taken`) or the token is gone (`missing`): end the lease accordingly. */
  function settle(state: FenceState): void {
    if (fate === 'fenced') return;
    if (state !== 'missing') return markLost();
    markMissing();
    if (!controller.signal.aborted) controller.abort(new StateLostError(fence.threadKey));
  }
  /** A write was refused: Redis says whether another holder has the thread or the token is gone. */
  async function settleRefusal(): Promise<void> {
    if (fate === 'fenced') return;
    // Unreadable: taken for fenced, the safe reading (the thread is told nothing).
    settle(await store.fenceState(fence).catch(() => 'taken' as const));
  }
  async function assertCurrent(): Promise<void> {
    if (!controller.signal.aborted) {
      let state: FenceState;
      try {
        // One round trip: the state that refuses the check also says how the lease ends.
        state = await store.fenceState(fence);
      } catch (error) {
        // Redis cannot say (an outage): while the lock we last renewed has not lapsed, nobody else
        // can have taken the thread, so a notice about the outage may still go out.
        if (fate === 'held' && now() < options.heldUntil()) return;
        throw error;
      }
      if (state === 'current') return;
      settle(state);
    }
    throw stopped();
  }
  return {
    fence,
    signal: controller.signal,
    ...(options.recovered ? { recovered: true } : {}),
    assertCurrent,
    async assertHeld() {
      if (controller.signal.aborted || fate !== 'held' || now() >= options.heldUntil()) await assertCurrent();
    },
    async guard(write) {
      try {
        return await write();
      } catch (error) {
        if (!isFencedError(error)) throw error;
        await settleRefusal();
        if (fate === 'missing') throw new StateLostError(fence.threadKey, { cause: error });
        throw error;
      }
    },
    lost: () => controller.signal.aborted,
    stateLost: () => fate === 'missing',
    markLost,
    markMissing,
    settleRefusal,
  };
}
