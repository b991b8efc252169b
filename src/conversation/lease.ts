import { FencedError } from '../store/fenced-error.js';
import type { Fence, WorkQueueStore } from '../store/state-store.js';

/**
 * A drain's hold on its thread: the fencing token every guarded write carries, and a check for
 * effects Redis cannot guard itself (a Slack post): `assertCurrent` asks Redis whether the token is
 * still the thread's newest and throws `FencedError` otherwise, so a process that stalled past its
 * lock stops before posting rather than after.
 */
export interface Lease {
  readonly fence: Fence;
  assertCurrent(): Promise<void>;
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
  let isLost = false;
  return {
    fence,
    async assertCurrent() {
      if (!isLost) {
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
      isLost = true;
      throw new FencedError(fence.threadKey);
    },
    lost: () => isLost,
    markLost() {
      isLost = true;
    },
  };
}
