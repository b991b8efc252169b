import { CountersignError, ErrorCode, hasErrorCode } from '../errors/countersign-error.js';

/**
 * The thread's fencing token is gone from Redis, and no other token took its place: Redis lost the
 * thread's state (a restart without persistence, a failover to a replica that never had it) while
 * this process ran a turn on it. Every write under the token is refused, so the turn stops as when
 * fenced; unlike fenced, nobody else knows the turn, so the thread is told (`state-lost-notice.ts`).
 */
export class StateLostError extends CountersignError {
  override readonly name = 'StateLostError';
  readonly code = ErrorCode.StateLost;
  readonly threadKey: string;

  constructor(threadKey: string, options?: { cause?: unknown }) {
    super(`Redis lost the state of thread ${threadKey}`, options);
    this.threadKey = threadKey;
  }
}

export function isStateLostError(error: unknown): error is StateLostError {
  return hasErrorCode(error, ErrorCode.StateLost);
}
