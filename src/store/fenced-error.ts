import { CountersignError, ErrorCode, hasErrorCode } from '../errors/countersign-error.js';

/**
 * A write refused because the caller's fencing token is no longer the thread's newest: another
 * process took the thread over while this one stalled. The caller stops without further effects;
 * the new holder finishes the work.
 */
export class FencedError extends CountersignError {
  override readonly name = 'FencedError';
  readonly code = ErrorCode.Fenced;
  readonly threadKey: string;

  constructor(threadKey: string) {
    super(`another process holds thread ${threadKey} now`);
    this.threadKey = threadKey;
  }
}

export function isFencedError(error: unknown): error is FencedError {
  return hasErrorCode(error, ErrorCode.Fenced);
}
