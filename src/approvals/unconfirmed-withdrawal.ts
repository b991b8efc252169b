import type { Logger } from 'pino';
import type { ReplicaShortfall } from '../store/state-store.js';
import type { PendingStep } from './pending-step.js';

/**
 * What a person is told when what they withdrew (a Deny, a grant's Revoke) took effect on Redis's
 * primary but its replicas (or its append-only file, `onDisk`) did not confirm it within the wait: a
 * failover or restart in the next moments could lose it and bring back what they withdrew, so they
 * are asked to look again rather than told it is done. `lookAgain` says where and what to do.
 */
export function unconfirmedWithdrawalText({ wanted, confirmed, onDisk }: ReplicaShortfall, lookAgain: string): string {
  if (confirmed >= wanted && onDisk === false) return `:warning: Redis has not confirmed it on disk yet, so a Redis restart in the next moments could undo it. ${lookAgain}`;
  return (
    `:warning: Redis has not confirmed it on ${wanted === 1 ? 'its replica' : `${wanted} replicas`} yet (${confirmed} confirmed within the wait), ` +
    `so a Redis failover in the next moments could undo it. ${lookAgain}`
  );
}

/**
 * `commitTransition`'s `onUnconfirmed` for withdrawals nobody is waiting to be told about (a step
 * closed by a newer message or by countersign, a hook's denial, an expiry): the operator's log says it.
 */
export function logUnconfirmedWithdrawal(logger: Pick<Logger, 'warn'>): (shortfall: ReplicaShortfall, step: PendingStep) => void {
  return (shortfall, step) =>
    logger.warn({ event: 'withdrawal-not-confirmed', stepId: step.stepId, ...shortfall }, 'closed or denied calls of a step, but Redis replicas did not confirm it in time: a failover now could open them again');
}
