import type { ChainableCommander, Cluster, Redis } from 'ioredis';

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

/**
 * ASK: the node that answered owns the slot (it is its primary) and is migrating it, and the key is not
 * there (moved already, or absent). A new slot map still names this node until the migration ends, so
 * sending again only gets ASK again; the node's answers to the keyless commands after the key are the
 * primary's own.
 */
export function isAskRedirect(error: unknown): boolean {
  return error instanceof Error && /^ASK\b/.test(error.message);
}

/** Asks a node for the cluster's slot map and waits for the answer (ioredis refreshes it in place). */
export function refreshSlotMap(cluster: Cluster): Promise<void> {
  return new Promise((resolve, reject) => cluster.refreshSlotsCache((error) => (error ? reject(error) : resolve())));
}

type PipelineReplies = Array<[Error | null, unknown]> | null;

/** Sends of one routed pipeline when a Cluster node keeps refusing it (its slots moved, a failover under way). */
const CLUSTER_ATTEMPTS = 4;
/** Before sending again after CLUSTERDOWN or TRYAGAIN (times the attempt): the cluster needs a moment, not a new map. */
const CLUSTER_RETRY_DELAY_MS = 100;

/**
 * Sends the pipeline `build` makes (its first command keyed, so it routes the keyless ones after it
 * to that key's primary) and returns its replies. In a Cluster, when a node refused that command unrun
 * (MOVED after a failover, CLUSTERDOWN, TRYAGAIN: see `isRefusedUnrun`), the slot map is refreshed
 * and the whole pipeline sent again, a few times at most; the first reply is then still a refusal, and
 * the others are not the primary's. ASK is returned at once (`isAskRedirect`): the primary answered, and
 * a slot map read again still names it while the slot migrates (a reshard, or one left unfinished), so
 * resending only delayed the same ASK. ioredis follows a pipeline's redirection only when every reply is
 * the same error, never here (a replica answers ROLE and INFO, refuses WAIT otherwise), and the
 * connection may see no other command that would teach it the new map: without this, every confirmed
 * write on a moved slot failed until the process restarted, and a read of the primary's settings
 * (`redis-persistence.ts`) took the demoted node's for them.
 */
export async function execRouted(client: Redis | Cluster, build: () => ChainableCommander): Promise<PipelineReplies> {
  for (let attempt = 1; ; attempt += 1) {
    const replies = (await build().exec()) as PipelineReplies;
    const refusal = replies?.[0]?.[0];
    if (!client.isCluster || !isRefusedUnrun(refusal) || isAskRedirect(refusal) || attempt >= CLUSTER_ATTEMPTS) return replies;
    // A refresh that fails leaves the map as it was: the next send fails the same way, and the last refusal is the answer.
    await refreshSlotMap(client as Cluster).catch(() => {});
    if (!/^MOVED\b/.test(refusal.message)) await new Promise((resolve) => setTimeout(resolve, CLUSTER_RETRY_DELAY_MS * attempt));
  }
}
