import type { Cluster } from 'ioredis';

/**
 * A Cluster node's refusal of a keyed command that it did not run: the slot is served elsewhere
 * (MOVED, or ASK while it migrates), or the cluster cannot serve it right now (CLUSTERDOWN during a
 * failover, TRYAGAIN during a migration). Redis checks this before running anything, so the
 * command may be sent again, even a script that is not idempotent.
 */
const REFUSED_UNRUN = /^(MOVED|ASK|CLUSTERDOWN|TRYAGAIN)\b/;

export function isRefusedUnrun(error: unknown): error is Error {
  return error instanceof Error && REFUSED_UNRUN.test(error.message);
}

/** Asks a node for the cluster's slot map and waits for the answer (ioredis refreshes it in place). */
export function refreshSlotMap(cluster: Cluster): Promise<void> {
  return new Promise((resolve, reject) => cluster.refreshSlotsCache((error) => (error ? reject(error) : resolve())));
}
