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
 * whether the person's workspace is one of the same enterprise. A payload that does not name the
 * person's workspace (a slash command; a shared channel's event without `user_team`) proves
 * nothing, so `users.info` is asked which workspace they belong to.
 */
export function membershipFromPayload(user: ActingUser): Membership | 'ask-slack' {
  if (user.userTeamId === undefined) return 'ask-slack';
  if (user.userTeamId === user.teamId) return 'member';
  return user.enterpriseId ? 'ask-slack' : 'external';
}

/** What `users.info` says of a person: their own workspace and, on Enterprise Grid, their enterprise. */
interface DescribedUser {
  teamId: string | undefined;
  enterpriseId: string | undefined;
}

/**
 * Membership once Slack has described the person. The payload's own workspace, when it names one,
 * stands over `users.info`'s; either way someone of another workspace counts only if the install is
 * on Enterprise Grid and Slack names its enterprise as theirs.
 */
export function membershipFromSlack(user: ActingUser, described: DescribedUser): Membership {
  const ownWorkspace = user.userTeamId ?? described.teamId;
  if (ownWorkspace !== undefined && ownWorkspace === user.teamId) return 'member';
  return user.enterpriseId !== undefined && described.enterpriseId === user.enterpriseId ? 'member' : 'external';
}

/** `users.info` is Tier 4; a short cache spares a lookup per click or command while a person leaving is seen soon. */
const DEFAULT_TTL_MS = 60 * 1000;
const MAX_CACHED = 5_000;

export interface OrganisationMembership {
  of(options: { client: WebClient; user: ActingUser }): Promise<Membership>;
}

/**
 * Decides membership for clicks, forms, commands and messages, asking `users.info` only when the
 * payload cannot tell. A lookup that fails is `unverified` and is not cached, so the next try asks
 * again; what Slack did say of someone is cached briefly, so a failing or rate-limited
 * `users.info` does not turn away a person it has just described.
 */
export function createOrganisationMembership({ logger, ttlMs = DEFAULT_TTL_MS, now = Date.now }: { logger?: Logger; ttlMs?: number; now?: () => number } = {}): OrganisationMembership {
  const cache = new Map<string, { described: DescribedUser; expiresAt: number }>();

  async function describe(client: WebClient, user: ActingUser): Promise<DescribedUser | undefined> {
    // Asked with the token of the install the payload came from.
    const key = `${user.enterpriseId}:${user.teamId}:${user.userId}`;
    const cached = cache.get(key);
    if (cached && cached.expiresAt > now()) return cached.described;
    try {
      const response = await client.users.info({ user: user.userId });
      const described: DescribedUser = { teamId: response.user?.team_id, enterpriseId: response.user?.enterprise_user?.enterprise_id };
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, { described, expiresAt: now() + ttlMs });
      return described;
    } catch (error) {
      logger?.warn({ event: 'membership-read-failed', userId: user.userId, err: error }, 'could not read whether a user belongs to the organisation');
      return undefined;
    }
  }

  return {
    async of({ client, user }) {
      const fromPayload = membershipFromPayload(user);
      if (fromPayload !== 'ask-slack') return fromPayload;
      const described = await describe(client, user);
      return described ? membershipFromSlack(user, described) : 'unverified';
    },
  };
}
