/**
 * A read meant for a primary was answered by a replica (`INFO replication`, `role:slave`): a node the
 * client still takes for the primary after a failover it has not heard of (a graceful `CLUSTER
 * FAILOVER`, as managed clusters make for maintenance, demotes the old master without closing its
 * connections). Its settings are not the primary's (`connected_slaves:0`, its own eviction policy and
 * append-only file, `WAITAOF` refused), so they are neither taken nor kept for them.
 */
export class ReplicaAnsweredError extends Error {
  override readonly name = 'ReplicaAnsweredError';

  constructor(role: string) {
    super(`Redis answered as a replica (INFO replication: role:${role}), not as the primary`);
  }
}
