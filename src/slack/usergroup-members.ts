import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';

/**
 * `usergroups.users.list` is Tier 2 (about 20 calls a minute): members are cached this long. Slack's
 * `subteam_members_changed` and `subteam_updated` events drop a group from the cache at once, so a
 * click is judged on membership at most this old only when such an event is lost or late.
 */
const DEFAULT_TTL_MS = 5 * 60 * 1000;

/** `fresh`: ask Slack, past the cache (the check at resume, which decides whether a call runs). */
export type ResolveGroups = (groupIds: readonly string[], options?: { fresh?: boolean }) => Promise<GroupMembers>;

/** The group reader with its cache, which Slack's membership events empty group by group. */
export type UsergroupMembers = ResolveGroups & {
  /** A group's members changed: its next read asks Slack. */
  forget: (groupId: string) => void;
};

/**
 * Members of the user groups a policy names as approvers. A group that cannot be read is left out
 * of the answer, so the authorization check says "try again" rather than guessing.
 */
export function createUsergroupMembers({ client, logger, ttlMs = DEFAULT_TTL_MS, now = Date.now }: { client: WebClient; logger: Logger; ttlMs?: number; now?: () => number }): UsergroupMembers {
  const cache = new Map<string, { members: ReadonlySet<string>; expiresAt: number }>();
  // Bumped by `forget`: a read that was under way when the group changed may carry the old members, so it is not cached.
  const changes = new Map<string, number>();
  const resolve: ResolveGroups = async (groupIds, options = {}) => {
    const resolved = new Map<string, ReadonlySet<string>>();
    for (const groupId of new Set(groupIds)) {
      const cached = options.fresh ? undefined : cache.get(groupId);
      if (cached && cached.expiresAt > now()) {
        resolved.set(groupId, cached.members);
        continue;
      }
      const changesBefore = changes.get(groupId) ?? 0;
      try {
        const response = await client.usergroups.users.list({ usergroup: groupId });
        const members = new Set(response.users ?? []);
        if ((changes.get(groupId) ?? 0) === changesBefore) cache.set(groupId, { members, expiresAt: now() + ttlMs });
        resolved.set(groupId, members);
      } catch (error) {
        logger.warn({ event: 'usergroup-read-failed', groupId, err: error }, 'could not read user group members');
      }
    }
    return resolved;
  };
  const forget = (groupId: string) => {
    cache.delete(groupId);
    changes.set(groupId, (changes.get(groupId) ?? 0) + 1);
  };
  return Object.assign(resolve, { forget });
}
