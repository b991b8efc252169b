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
      const listed = await store.listGrants({ teamId: thread.teamId, channel: thread.channel, now: now() });
      // With `grantId` (a call checking the grant it was let through on): that grant or none, so a revoke is seen even when another grant would cover the call.
      const grants = listed.filter((grant) => grant.toolName === toolName && (grantId === undefined || grant.grantId === grantId));
      if (grants.length === 0) return undefined;
      // The gate (no `grantId`) decides whether the call runs without a card, so it reads the groups fresh, as the
      // check at resume does: a grantor who left the group since no longer counts, whichever process runs the
      // turn (only the one receiving Slack's events empties its cache). A group Slack does not answer for is left
      // out, so the grant does not hold and the call gets a card. The checks before the start, moments later,
      // go by the member list that read just refreshed.
      const groupMembers = await resolveGroups(approverGroupIds(evaluation), { fresh: grantId === undefined });
      const fingerprint = await definitionFingerprint?.();
      const candidate = { toolName, channel: thread.channel, threadTs: thread.threadTs, input, evaluation, requesterId, ...(thread.instigatorIds === undefined ? {} : { instigatorIds: thread.instigatorIds }), groupMembers, now: now(), ...(fingerprint === undefined ? {} : { definitionFingerprint: fingerprint }) };
      return grants.find((grant) => grantCovers(grant, candidate));
    };
}
