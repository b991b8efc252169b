import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { Membership } from '../approvals/transitions/call-action.js';

/**
 * Who acted, as Slack's signed payload says. In a Slack Connect channel `teamId` (a click's
 * `team.id`, an event's `team_id`) is the workspace the app is installed in, whoever acted; only
 * `userTeamId` (a click's `user.team_id`, an event's `user_team`) is the person's own workspace.
 */
export interface ActingUser {
  userId: string;
  userTeamId: string | undefined;
  teamId: string | undefined;
  /** The install's Enterprise Grid organisation, if any: says nothing about the person's. */
  enterpriseId: string | undefined;
}

/**
 * What the payload alone proves: the same workspace is a member; another workspace is outside
 * the organisation unless the install is on Enterprise Grid, where only `users.info` can tell
 * whether the person's workspace is one of the same enterprise.
 */
export function membershipFromPayload(user: ActingUser): Membership | 'ask-slack' {
  if (user.userTeamId !== undefined && user.userTeamId === user.teamId) return 'member';
  return user.enterpriseId ? 'ask-slack' : 'external';
}

/** `users.info` is Tier 4; a short cache spares a lookup per click while a person leaving is seen soon. */
const DEFAULT_TTL_MS = 60 * 1000;
const MAX_CACHED = 5_000;

export interface OrganisationMembership {
  of(options: { client: WebClient; user: ActingUser }): Promise<Membership>;
}

/**
 * Decides membership for clicks, forms and messages. A lookup that fails is `unverified` and is
 * not cached, so the next try asks again; a definite answer is cached briefly.
 */
export function createOrganisationMembership({ logger, ttlMs = DEFAULT_TTL_MS, now = Date.now }: { logger?: Logger; ttlMs?: number; now?: () => number } = {}): OrganisationMembership {
  const cache = new Map<string, { membership: Membership; expiresAt: number }>();
  return {
    async of({ client, user }) {
      const fromPayload = membershipFromPayload(user);
      if (fromPayload !== 'ask-slack') return fromPayload;
      const key = `${user.enterpriseId}:${user.userId}`;
      const cached = cache.get(key);
      if (cached && cached.expiresAt > now()) return cached.membership;
      try {
        const response = await client.users.info({ user: user.userId });
        const enterpriseOfUser = response.user?.enterprise_user?.enterprise_id;
        const membership: Membership = enterpriseOfUser !== undefined && enterpriseOfUser === user.enterpriseId ? 'member' : 'external';
        if (cache.size >= MAX_CACHED) cache.clear();
        cache.set(key, { membership, expiresAt: now() + ttlMs });
        return membership;
      } catch (error) {
        logger?.warn({ event: 'membership-read-failed', userId: user.userId, err: error }, 'could not read whether a user belongs to the organisation');
        return 'unverified';
      }
    },
  };
}

