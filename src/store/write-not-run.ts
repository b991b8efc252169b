import { ReplyError } from 'ioredis';
import { isRefusedUnrun } from './cluster-redirection.js';

export { ReplyError };

/**
 * Whether a store write that failed with `error` certainly did not run. Redis answered with an
 * error reply (ioredis's ReplyError): it refused the command before writing (OOM at maxmemory with
 * noeviction, NOREPLICAS, MISCONF, BUSY, NOSCRIPT, LOADING, READONLY, MASTERDOWN, a cluster's MOVED,
 * ASK, CLUSTERDOWN or TRYAGAIN left after the last redirect: see `isRefusedUnrun`). The decision
 * scripts check everything before their first write, and Redis refuses a script for OOM only
 * before it has written; after that only a key of the wrong type (another writer on our prefix)
 * could fail one midway. Anything else (a connection cut before the reply, a timeout, ioredis
 * giving up on a command it may already have sent) leaves whether it ran unknown, unless the store
 * says it failed before sending the write (`WriteNotSentError`).
 */
export function writeDidNotRun(error: unknown): boolean {
  return error instanceof WriteNotSentError || error instanceof ReplyError || isRefusedUnrun(error);
}

/**
 * A store write that failed before its write command was sent (a read it needs first, such as the
 * grant's clock, failed): nothing can have been written. It keeps the failure's message and code,
 * so whether to ask again (`isStoreUnavailable`) is judged as for the failure itself.
 */
export class WriteNotSentError extends Error {
  readonly code: string | undefined;
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'WriteNotSentError';
    const { code } = (cause ?? {}) as { code?: unknown };
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/** Rethrows a failure before the write as `WriteNotSentError`: for `.catch` on what a write awaits first. */
export function notSent(error: unknown): never {
  throw error instanceof WriteNotSentError ? error : new WriteNotSentError(error);
}
