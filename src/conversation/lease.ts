import { FencedError, isFencedError } from '../store/fenced-error.js';
import type { Fence, WorkQueueStore } from '../store/state-store.js';

/**
 * A drain's hold on its thread: the fencing token every guarded write carries, a check for effects
 * Redis cannot guard itself (a Slack post), and a signal that aborts the turn (its model calls and
 * tools) as soon as this process learns another holder took the thread.
 */
export interface Lease {
  readonly fence: Fence;
  /** Aborted once this process knows it no longer holds the thread. */
  readonly signal: AbortSignal;
  /**
   * Asks Redis whether the token is still the thread's newest and throws `FencedError` otherwise,
   * so a process that stalled past its lock stops before posting rather than after.
   */
  assertCurrent(): Promise<void>;
  /**
   * Like `assertCurrent`, without a round trip while the lock this process last renewed cannot
   * have lapsed (by its own clock, measured from before the renewal was sent): nobody else can
   * hold the thread yet. Before each Slack write and each tool run, where a stall must be caught
   * but a round trip each time would be waste.
   */
  assertHeld(): Promise<void>;
  /** Runs a fenced write; a `FencedError` from it ends the lease. */
  guard<T>(write: () => Promise<T>): Promise<T>;
  /** True once this process knows another holder took the thread. */
  lost(): boolean;
}

export function createLease(options: {
  store: Pick<WorkQueueStore, 'isCurrent'>;
  fence: Fence;
  /** Until when (epoch ms, by this process's clock) the lock was last known to be ours. */
  heldUntil: () => number;
  now?: () => number;
}): Lease & { markLost(): void } {
  const { store, fence, now = Date.now } = options;
  const controller = new AbortController();
  const markLost = () => {
    if (!controller.signal.aborted) controller.abort(new FencedError(fence.threadKey));
  };
  async function assertCurrent(): Promise<void> {
    if (!controller.signal.aborted) {
      let current: boolean;
      try {
        current = await store.isCurrent(fence);
      } catch (error) {
        // Redis cannot say (an outage): while the lock we last renewed has not lapsed, nobody else
        // can have taken the thread, so a notice about the outage may still go out.
        if (now() < options.heldUntil()) return;
        throw error;
      }
      if (current) return;
    }
    markLost();
    throw new FencedError(fence.threadKey);
  }
  return {
    fence,
    signal: controller.signal,
    assertCurrent,
    async assertHeld() {
      if (controller.signal.aborted || now() >= options.heldUntil()) await assertCurrent();
    },
    async guard(write) {
      try {
        return await write();
      } catch (error) {
        if (isFencedError(error)) markLost();
        throw error;
      }
    },
    lost: () => controller.signal.aborted,
    markLost,
  };
}
