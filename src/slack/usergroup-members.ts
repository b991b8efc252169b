import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';

/**
 * `usergroups.users.list` is Tier 2 (about 20 calls a minute): members are cached this long. Slack's
 * `subteam_members_changed` and `subteam_updated` events drop a group from the cache at once, so a
 * click is judged on membership at most this old only when such an event is lost or late.
 */
const DEFAULT_TTL_MS = 5 * 60 * 1000;

/**
 * `fresh`: ask Slack, past the cache (the check at resume and a grant's check at the gate, which decide
 * whether a call runs). A read of the group already under way is shared rather than asked again.
 */
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
  // Slack reads under way, by group: callers asking meanwhile (a turn's parallel calls each checking a
  // grant fresh, several resumes) share one request rather than spend the Tier 2 budget on the same answer.
  // Only while the group has not changed since the read began: after `forget` a new read is made.
  const inFlight = new Map<string, { changesBefore: number; read: Promise<ReadonlySet<string> | undefined> }>();
  const ask = async (groupId: string, changesBefore: number): Promise<ReadonlySet<string> | undefined> => {
    try {
      const response = await client.usergroups.users.list({ usergroup: groupId });
      const members: ReadonlySet<string> = new Set(response.users ?? []);
      if ((changes.get(groupId) ?? 0) === changesBefore) cache.set(groupId, { members, expiresAt: now() + ttlMs });
      return members;
    } catch (error) {
      logger.warn({ event: 'usergroup-read-failed', groupId, err: error }, 'could not read user group members');
      return undefined;
    }
  };
  const read = (groupId: string): Promise<ReadonlySet<string> | undefined> => {
    const changesBefore = changes.get(groupId) ?? 0;
    const shared = inFlight.get(groupId);
    if (shared && shared.changesBefore === changesBefore) return shared.read;
    // `finally` runs only once the read settled, always after this entry was stored.
    const entry = { changesBefore, read: ask(groupId, changesBefore) };
    entry.read = entry.read.finally(() => {
      if (inFlight.get(groupId) === entry) inFlight.delete(groupId);
    });
    inFlight.set(groupId, entry);
    return entry.read;
  };
  const resolve: ResolveGroups = async (groupIds, options = {}) => {
    const resolved = new Map<string, ReadonlySet<string>>();
    for (const groupId of new Set(groupIds)) {
      const cached = options.fresh ? undefined : cache.get(groupId);
      if (cached && cached.expiresAt > now()) {
        resolved.set(groupId, cached.members);
        continue;
      }
      const members = await read(groupId);
      if (members) resolved.set(groupId, members);
    }
    return resolved;
  };
  const forget = (groupId: string) => {
    cache.delete(groupId);
    changes.set(groupId, (changes.get(groupId) ?? 0) + 1);
  };
  return Object.assign(resolve, { forget });
}
