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
 * giving up on a command it may already have sent) leaves whether it ran unknown.
 */
export function writeDidNotRun(error: unknown): boolean {
  return error instanceof ReplyError || isRefusedUnrun(error);
}
