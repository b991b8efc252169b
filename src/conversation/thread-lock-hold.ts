import { CountersignError, ErrorCode } from '../errors/countersign-error.js';
import { isFencedError } from '../store/fenced-error.js';
import type { Fence, FenceState, StateStore } from '../store/state-store.js';

/** The first pause before queue bookkeeping is tried again, doubled up to the maximum. */
const RETRY_FIRST_DELAY_MS = 100;
const RETRY_MAX_DELAY_MS = 1_000;

export class LockLostError extends CountersignError {
  override readonly name = 'LockLostError';
  readonly code = ErrorCode.LockLost;
}

/**
 * A drain's hold on its thread lock, for its own bookkeeping. Queue bookkeeping that fails
 * because the store is unreachable (a Redis restart) is tried again for as long as the lock can still be ours: giving up would leave
 * the thread locked, and every later message on it queued unseen, until the lock lapsed. Before
 * each new try the lock is renewed, so a drain never goes on once another process has the thread
 * (or Redis came back without the lock): that ends the drain with a LockLostError. Past the lock's
 * TTL the original error is thrown; the recovery sweep then treats the work like a dead process's.
 */
export function createHold(options: { store: StateStore; fence: Fence; lockTtlMs: number; askedAt: number; onMissing: () => void }) {
  const { store, fence, lockTtlMs } = options;
  const { threadKey } = fence;
  // Counted from before the lock was asked for, not from now: a process that stalled between
  // taking the lock and running its work must not take the lock for held (a successor may have it).
  let heldUntil = options.askedAt + lockTtlMs;

  async function renew(): Promise<FenceState> {
    const askedAt = Date.now();
    const held = await store.extendLock(fence, lockTtlMs);
    if (held === 'current') heldUntil = Math.max(heldUntil, askedAt + lockTtlMs);
    if (held === 'missing') options.onMissing();
    return held;
  }

  async function whileHeld<T>(operation: () => Promise<T>, hooks: { retry: () => Promise<T>; onFailure: (error: unknown) => void }): Promise<T> {
    let failure: unknown;
    try {
      return await operation();
    } catch (error) {
      // Fenced is an answer, not an outage: another process has the thread.
      if (isFencedError(error)) throw error;
      failure = error;
    }
    hooks.onFailure(failure);
    for (let delay = RETRY_FIRST_DELAY_MS; ; delay = Math.min(delay * 2, RETRY_MAX_DELAY_MS)) {
      if (Date.now() + delay >= heldUntil) throw failure;
      await new Promise((resolve) => setTimeout(resolve, delay));
      const held = await renew().catch(() => undefined);
      if (held === 'taken' || held === 'missing') throw new LockLostError(`lost the lock on ${threadKey}`);
      // Still unreachable: wait longer, until the lock would lapse.
      if (held === undefined) continue;
      try {
        return await hooks.retry();
      } catch (error) {
        if (isFencedError(error)) throw error;
        failure = error;
      }
    }
  }

  return { renew, whileHeld, heldUntil: () => heldUntil };
}
