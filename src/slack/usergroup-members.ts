import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';

/** `usergroups.users.list` is Tier 2 (about 20 calls a minute): members are cached this long. */
const DEFAULT_TTL_MS = 5 * 60 * 1000;

export type ResolveGroups = (groupIds: readonly string[]) => Promise<GroupMembers>;

/**
 * Members of the user groups a policy names as approvers. A group that cannot be read is left out
 * of the answer, so the authorization check says "try again" rather than guessing.
 */
export function createUsergroupMembers({ client, logger, ttlMs = DEFAULT_TTL_MS, now = Date.now }: { client: WebClient; logger: Logger; ttlMs?: number; now?: () => number }): ResolveGroups {
  const cache = new Map<string, { members: ReadonlySet<string>; expiresAt: number }>();
  return async (groupIds) => {
    const resolved = new Map<string, ReadonlySet<string>>();
    for (const groupId of new Set(groupIds)) {
      const cached = cache.get(groupId);
      if (cached && cached.expiresAt > now()) {
        resolved.set(groupId, cached.members);
        continue;
      }
      try {
        const response = await client.usergroups.users.list({ usergroup: groupId });
        const members = new Set(response.users ?? []);
        cache.set(groupId, { members, expiresAt: now() + ttlMs });
        resolved.set(groupId, members);
      } catch (error) {
        logger.warn({ event: 'usergroup-read-failed', groupId, err: error }, 'could not read user group members');
      }
    }
    return resolved;
  };
}
