import type { Grant } from '../approvals/grant.js';
import { grantCovers } from '../approvals/grant.js';
import { approverGroupIds } from '../approvals/policy/approver-eligibility.js';
import type { RunTurnOptions } from '../agent/run-turn.js';
import type { ThreadState } from '../store/thread-state.js';
import type { PhaseDependencies } from './phase-dependencies.js';

/** Finds a standing grant that covers a call in this thread, checked against the current policy and group membership. */
export function createGrantLookup({ store, resolveGroups, now }: Pick<PhaseDependencies, 'store' | 'resolveGroups' | 'now'>) {
  return (thread: ThreadState, requesterId: string): NonNullable<RunTurnOptions['findGrant']> =>
    async ({ toolName, input, evaluation, grantId, definitionFingerprint }): Promise<Grant | undefined> => {
      const grants = await store.listGrants({ teamId: thread.teamId, channel: thread.channel, now: now() });
      if (grants.length === 0) return undefined;
      const groupMembers = await resolveGroups(approverGroupIds(evaluation));
      const fingerprint = await definitionFingerprint?.();
      const candidate = { toolName, channel: thread.channel, threadTs: thread.threadTs, input, evaluation, requesterId, ...(thread.instigatorIds === undefined ? {} : { instigatorIds: thread.instigatorIds }), groupMembers, now: now(), ...(fingerprint === undefined ? {} : { definitionFingerprint: fingerprint }) };
      // With `grantId` (a call checking the grant it was let through on): that grant or none, so a revoke is seen even when another grant would cover the call.
      return grants.find((grant) => (grantId === undefined || grant.grantId === grantId) && grantCovers(grant, candidate));
    };
}
