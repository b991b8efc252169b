import type { Grant } from '../approvals/grant.js';
import { grantCovers } from '../approvals/grant.js';
import { approverGroupIds, reliesOnChannelMembership } from '../approvals/policy/approver-eligibility.js';
import type { RunTurnOptions } from '../agent/run-turn.js';
import type { ThreadState } from '../store/thread-state.js';
import type { PhaseDependencies } from './phase-dependencies.js';

/** Finds a standing grant that covers a call in this thread, checked against the current policy, group and channel membership. */
export function createGrantLookup({ store, resolveGroups, channelsOf, now }: Pick<PhaseDependencies, 'store' | 'resolveGroups' | 'channelsOf' | 'now'>) {
  return (thread: ThreadState, requesterId: string): NonNullable<RunTurnOptions['findGrant']> =>
    async ({ toolName, input, evaluation, grantId, definitionFingerprint }): Promise<Grant | undefined> => {
      // Also hidden by this replica's clock (`hideEndedBy`): this read lets a call skip its card, so a fast clock fails closed.
      const listed = await store.listGrants({ teamId: thread.teamId, channel: thread.channel, hideEndedBy: now() });
      // With `grantId` (a call checking the grant it was let through on): that grant or none, so a revoke is seen even when another grant would cover the call.
      const grants = listed.filter((grant) => grant.toolName === toolName && (grantId === undefined || grant.grantId === grantId));
      if (grants.length === 0) return undefined;
      // The gate (no `grantId`) decides whether the call runs without a card, so it reads the groups fresh, as the
      // check at resume does: a grantor who left the group since no longer counts, whichever process runs the
      // turn (only the one receiving Slack's events empties its cache). A group Slack does not answer for is left
      // out, so the grant does not hold and the call gets a card. The checks before the start, moments later,
      // go by the member list that read just refreshed. The grantors' channels are read the same way.
      const fresh = grantId === undefined;
      const [groupMembers, inChannel] = await Promise.all([
        resolveGroups(approverGroupIds(evaluation), { fresh }),
        reliesOnChannelMembership(evaluation) ? grantorsInChannel({ channelsOf, grants, channel: thread.channel, fresh }) : Promise.resolve(new Set<string>()),
      ]);
      const fingerprint = await definitionFingerprint?.();
      const candidate = {
        toolName,
        channel: thread.channel,
        threadTs: thread.threadTs,
        input,
        evaluation,
        requesterId,
        ...(thread.instigatorIds === undefined ? {} : { instigatorIds: thread.instigatorIds }),
        groupMembers,
        inChannel: (userId: string) => inChannel.has(userId),
        now: now(),
        ...(fingerprint === undefined ? {} : { definitionFingerprint: fingerprint }),
      };
      return grants.find((grant) => grantCovers(grant, candidate));
    };
}

/**
 * The grantors still in the channel, read only when the rule's `channel` approver needs it (a
 * grant from a named approver or a group member does not depend on it). A grantor whose channels
 * Slack does not answer for is left out: their grant does not hold, and the call gets a card.
 */
async function grantorsInChannel({ channelsOf, grants, channel, fresh }: { channelsOf: PhaseDependencies['channelsOf']; grants: readonly Grant[]; channel: string; fresh: boolean }): Promise<ReadonlySet<string>> {
  const grantors = [...new Set(grants.map((grant) => grant.grantedBy))];
  const channels = await Promise.all(grantors.map((grantor) => channelsOf(grantor, { fresh })));
  return new Set(grantors.filter((_, index) => channels[index]?.has(channel) === true));
}
