import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';

/** `users.conversations` is Tier 3: a person's channels are cached this long. */
const DEFAULT_TTL_MS = 60 * 1000;
/** Pages read at most (999 channels each); a person in more is shown what the first pages hold. */
const MAX_PAGES = 5;

/** Why a person outside the request's channel, as `ChannelsOf` says, was refused. */
export const NOT_A_MEMBER_TEXT = 'You are not in the channel this request was made in, so nothing changed.';
/** Why a person was refused when Slack could not say which channels they are in (fail closed). */
export const CHANNELS_UNKNOWN_TEXT = ':warning: Could not check which channels you are in just now, so nothing changed. Please try again.';

/**
 * The channels a person is in, or undefined when Slack could not say (callers then show and allow
 * nothing). `fresh`: ask Slack, past the cache (a grant's check at the gate, which decides whether a
 * call runs without a card); a read of the person's channels already under way is shared.
 */
export type ChannelsOf = (userId: string, options?: { fresh?: boolean }) => Promise<ReadonlySet<string> | undefined>;

/**
 * A click on a card is delivered only to people who can see it, which is what the `channel`
 * approver and the cards' privacy rest on. App Home shows and decides calls from every channel, so
 * it asks Slack which channels the viewer is in: a private channel's requests are never shown to,
 * or decided by, someone outside it. A grant under a `channel` approver asks the same of its
 * grantor, who could not approve there any more once out of the channel.
 */
export function createChannelMembership({ client, logger, ttlMs = DEFAULT_TTL_MS, now = Date.now }: { client: WebClient; logger: Logger; ttlMs?: number; now?: () => number }): ChannelsOf {
  const cache = new Map<string, { channels: ReadonlySet<string>; expiresAt: number }>();
  // A turn's parallel calls each check their grant fresh: they share one request for the same person.
  const inFlight = new Map<string, Promise<ReadonlySet<string> | undefined>>();
  const ask = async (userId: string): Promise<ReadonlySet<string> | undefined> => {
    try {
      const channels = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const response = await client.users.conversations({
          user: userId,
          types: 'public_channel,private_channel,mpim,im',
          exclude_archived: true,
          limit: 999,
          ...(cursor ? { cursor } : {}),
        });
        for (const channel of response.channels ?? []) if (channel.id) channels.add(channel.id);
        cursor = response.response_metadata?.next_cursor || undefined;
        if (!cursor) break;
      }
      cache.set(userId, { channels, expiresAt: now() + ttlMs });
      return channels;
    } catch (error) {
      logger.warn({ event: 'user-channels-read-failed', userId, err: error }, 'could not read the channels a user is in');
      return undefined;
    }
  };
  return async (userId, options = {}) => {
    const cached = options.fresh ? undefined : cache.get(userId);
    if (cached && cached.expiresAt > now()) return cached.channels;
    const shared = inFlight.get(userId);
    if (shared) return shared;
    const read = ask(userId).finally(() => inFlight.delete(userId));
    inFlight.set(userId, read);
    return read;
  };
}
