/**
 * What ioredis and Redis say when the store cannot serve right now but may within seconds: the
 * connection is down or being re-established (a restart, a Sentinel or Cluster failover), or the
 * server is still loading its data or is a replica that just stopped being the primary.
 */
const UNAVAILABLE_MESSAGE = /max retries per request|Connection is closed|Stream isn't writeable|enableOfflineQueue|^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/i;
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** True when asking Redis again shortly may succeed; false for refusals, fenced writes and bugs. */
export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as NodeJS.ErrnoException;
  return (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) || UNAVAILABLE_MESSAGE.test(error.message);
}
