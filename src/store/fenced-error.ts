/**
 * A write refused because the caller's fencing token is no longer the thread's newest: another
 * process took the thread over while this one stalled. The caller stops without further effects;
 * the new holder finishes the work.
 */
export class FencedError extends Error {
  readonly code = 'FENCED';
  readonly threadKey: string;

  constructor(threadKey: string) {
    super(`another process holds thread ${threadKey} now`);
    this.name = 'FencedError';
    this.threadKey = threadKey;
  }
}

export function isFencedError(error: unknown): error is FencedError {
  return error instanceof FencedError;
}
