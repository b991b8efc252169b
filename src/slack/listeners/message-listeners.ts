import { setTimeout as delay } from 'node:timers/promises';
import { context, SpanKind, type Tracer } from '@opentelemetry/api';
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { CLICK_STORE_WAIT_MS } from '../../approvals/decide-call.js';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import { countersignTracer, inSpan, traceparentOf } from '../../tracing/trace-context.js';
import type { Logger } from 'pino';
import { shortError } from '../../conversation/short-error.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { ThreadWorker } from '../../conversation/thread-worker.js';
import { stripBotMention } from '../../conversation/user-messages.js';
import type { MessageWorkItem } from '../../conversation/work-item.js';
import { isNewerSchemaError } from '../../store/newer-schema-error.js';
import type { StateStore } from '../../store/state-store.js';
import { isStoreUnavailable } from '../../store/store-unavailable.js';
import { newThreadState, threadKeyOf } from '../../store/thread-state.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';

/** Slack retries a delivery for about five minutes; remembering it for an hour covers every retry. */
const DELIVERY_DEDUPE_TTL_MS = 60 * 60 * 1000;

/** Between reads of a followed thread while the store is unavailable. */
const STORE_RETRY_MS = 250;

const EXTERNAL_REQUESTER_TEXT = "I only take requests from members of this workspace's organisation, so I did not act on your message.";
const REQUESTER_UNVERIFIED_TEXT = ":warning: I could not check that you are a member of this workspace's organisation just now, so I did not act on your message. Please send it again in a minute.";

/** Message subtypes that are still a person talking; every other subtype is an edit, join, bot post… */
const HUMAN_SUBTYPES = new Set([undefined, 'file_share', 'thread_broadcast']);

export interface MessageListenerOptions {
  store: StateStore;
  worker: ThreadWorker;
  messenger: ThreadMessenger;
  botUserId: string;
  logger: Logger;
  /** How long a thread is followed after its last message (the history TTL). */
  followTtlMs: number;
  /** How long a reply waits for an unavailable store to say whether its thread is followed; a click's wait unless given. */
  storeWaitMs?: number;
  tracer?: Tracer;
  /** Whether the person who wrote belongs to the workspace's organisation (shared with the other listeners). */
  organisationMembership?: OrganisationMembership;
  /** Where refused requests are recorded. */
  audit?: AuditLog;
}

/** The poster's own workspace and the install's enterprise, as the event says. */
interface Poster {
  userTeamId: string | undefined;
  enterpriseId: string | undefined;
}

/**
 * In a Slack Connect channel the event's `team_id` is the install's workspace whoever wrote; the
 * poster's own is `user_team` (and the message's `team`). An event naming neither is taken as the
 * install's own only outside an externally shared channel; inside one the poster's workspace is left
 * unknown, for the membership to ask Slack.
 */
function posterOf(event: { user_team?: unknown; team?: unknown }, body: { is_ext_shared_channel?: unknown; enterprise_id?: unknown }, context: { enterpriseId?: string | undefined }, teamId: string): Poster {
  const named = [event.user_team, event.team].find((candidate): candidate is string => typeof candidate === 'string');
  const enterpriseId = context.enterpriseId ?? (typeof body.enterprise_id === 'string' ? body.enterprise_id : undefined);
  return { userTeamId: named ?? (body.is_ext_shared_channel === true ? undefined : teamId), enterpriseId };
}

interface IncomingMessage {
  eventId: string;
  teamId: string;
  channel: string;
  userId: string;
  text: string;
  ts: string;
  threadTs?: string;
}

/**
 * Mentions start (or join) a thread; later messages in a followed thread, and every direct message,
 * continue it. The mention and the plain `message` event for one post are the same post: both paths
 * claim the post's channel+ts, so it is answered once, and retries are dropped by event id.
 */
export function registerMessageListeners(app: App, options: MessageListenerOptions): void {
  const { store, worker, messenger, botUserId, logger, followTtlMs, audit } = options;
  const tracer = options.tracer ?? countersignTracer();
  const storeWaitMs = options.storeWaitMs ?? CLICK_STORE_WAIT_MS;
  const organisationMembership = options.organisationMembership ?? createOrganisationMembership({ logger });

  /**
   * Whether the person who wrote may make requests: only members of the workspace's organisation.
   * In a Slack Connect channel a partner's people can mention the bot; their turn would run tools
   * (those needing no approval at once, others under grants) and make them the requester. Someone
   * refused is told privately, except for chatter in a followed thread, which is only left out.
   */
  async function mayRequest({ client, message, poster, tellIfExternal }: { client: WebClient; message: IncomingMessage; poster: Poster; tellIfExternal: boolean }): Promise<boolean> {
    const membership = await organisationMembership.of({ client, user: { userId: message.userId, teamId: message.teamId, ...poster } });
    if (membership === 'member') return true;
    const [code, reason] = membership === 'external' ? ['external-user', EXTERNAL_REQUESTER_TEXT] : ['membership-unverified', REQUESTER_UNVERIFIED_TEXT];
    logger.info({ event: 'request-refused', code, userId: message.userId, channel: message.channel }, 'did not act on a message from outside the organisation');
    if (audit) await appendQuietly(audit, { type: 'action-refused', teamId: message.teamId, channel: message.channel, userId: message.userId, action: 'request', code, reason }, logger);
    if (membership === 'external' && !tellIfExternal) return false;
    await messenger.postEphemeral({ channel: message.channel, userId: message.userId, threadTs: message.threadTs ?? message.ts, text: reason }).catch(() => {});
    return false;
  }

  async function tellNotTaken(place: { channel: string; threadTs: string }, error: unknown): Promise<void> {
    await messenger
      .postNotice({ ...place, text: `:warning: I could not take this message (${shortError(error)}). Nothing was run; please send it again in a moment.` })
      .catch(() => {});
  }

  /**
   * Takes a message in, if it is the first delivery of its event and of its post, and its writer may
   * make requests (`admit`). Both are claimed before anything is said or recorded, so a retry of a refused
   * message is not refused (told, audited) a second time, and a retry of one refused because the
   * membership could not be checked does not run what she was told was not taken: she sends it again
   * as a new message, which runs once.
   */
  async function accept({ message, readEarlierMessages, startsFollowing, admit }: { message: IncomingMessage; readEarlierMessages: boolean; startsFollowing: boolean; admit: () => Promise<boolean> }): Promise<void> {
    try {
      // The event and its post, before the writer is judged: a retry, and the `message` + `app_mention`
      // pair of one post (both come for a DM that mentions the bot, with different event ids), are one
      // request, refused or taken once.
      if (!(await firstDelivery(message, [`event:${message.eventId}`, `post:${message.channel}:${message.ts}`]))) return;
      if (!(await admit())) return;
      // The trace of the turn starts here; the queued item carries it to whichever process runs the turn.
      await inSpan(
        {
          tracer,
          name: 'countersign.slack_event',
          kind: SpanKind.SERVER,
          parent: context.active(),
          attributes: { 'slack.event_id': message.eventId, 'slack.team_id': message.teamId, 'slack.channel': message.channel },
        },
        (traceContext) => enqueue(message, readEarlierMessages, startsFollowing, traceparentOf(traceContext)),
      );
    } catch (error) {
      logger.error({ event: 'message-accept-failed', eventId: message.eventId, err: error }, 'could not accept message');
      await tellNotTaken({ channel: message.channel, threadTs: message.threadTs ?? message.ts }, error);
    }
  }

  async function firstDelivery(message: IncomingMessage, keys: string[]): Promise<boolean> {
    if (await store.claimOnce(keys, DELIVERY_DEDUPE_TTL_MS)) return true;
    logger.debug({ event: 'delivery-duplicate', eventId: message.eventId, keys }, 'ignored a repeated delivery');
    return false;
  }

  /**
   * Whether a reply without a mention belongs to a followed thread. Slack has its ack, so it will not
   * send the reply again: while the store is unavailable the read is tried again for a few seconds, as a
   * click's decision is. Past that the reply is lost, and the thread is told only if the bot wrote or
   * was mentioned in it: during an outage every reply in every thread of the channel comes here, and a
   * notice in threads the bot never joined would be noise.
   */
  async function isFollowed(thread: { teamId: string; channel: string; threadTs: string }): Promise<boolean> {
    const waitUntil = Date.now() + storeWaitMs;
    for (;;) {
      try {
        return (await store.getThread(threadKeyOf(thread))) !== undefined;
      } catch (error) {
        // Stored by a newer release: followed. Its item tells the thread this process cannot continue it.
        if (isNewerSchemaError(error)) return true;
        if (isStoreUnavailable(error) && Date.now() + STORE_RETRY_MS <= waitUntil) {
          await delay(STORE_RETRY_MS);
          continue;
        }
        logger.warn({ event: 'thread-reply-unread', channel: thread.channel, threadTs: thread.threadTs, err: error }, 'could not tell whether a thread is followed; its reply is dropped');
        if (await botTookPart(thread)) await tellNotTaken(thread, error);
        return false;
      }
    }
  }

  async function botTookPart({ channel, threadTs }: { channel: string; threadTs: string }): Promise<boolean> {
    try {
      const messages = await messenger.readThread({ channel, threadTs });
      return messages.some((each) => each.userId === botUserId || each.text.includes(`<@${botUserId}>`));
    } catch (error) {
      logger.debug({ event: 'thread-read-failed', err: error }, 'could not read the thread');
      return false;
    }
  }

  async function enqueue(message: IncomingMessage, readEarlierMessages: boolean, startsFollowing: boolean, traceparent: string | undefined): Promise<void> {
    const threadTs = message.threadTs ?? message.ts;
    const item: MessageWorkItem = {
      kind: 'message',
      userId: message.userId,
      text: stripBotMention(message.text, botUserId),
      ts: message.ts,
      teamId: message.teamId,
      channel: message.channel,
      threadTs,
      readEarlierMessages,
      ...(traceparent ? { traceparent } : {}),
    };
    // Followed from the moment of the mention, so a reply sent while the first turn runs is queued
    // for that thread instead of being ignored as chatter in an unknown thread.
    if (startsFollowing) await store.createThreadIfAbsent(newThreadState(item, Date.now()), followTtlMs);
    // Acked: the stop waits for it, and runs it even once stopping if its enqueue takes the thread with it.
    await worker.submit(threadKeyOf(item), item, { fromRequest: true });
  }

  app.event('app_mention', async ({ event, body, context, client }) => {
    if (event.bot_id || !event.user) return;
    // An edit of a mention comes as a new app_mention for the same post. It is not a new request (the
    // delivery dedupe forgets the post after an hour, so a typo fixed tomorrow would run it again).
    if (event.edited) return;
    const teamId = context.teamId ?? body.team_id;
    const message: IncomingMessage = {
      eventId: body.event_id,
      teamId,
      channel: event.channel,
      userId: event.user,
      text: event.text,
      ts: event.ts,
      ...(event.thread_ts ? { threadTs: event.thread_ts } : {}),
    };
    await accept({
      message,
      readEarlierMessages: event.thread_ts !== undefined && event.thread_ts !== event.ts,
      startsFollowing: true,
      admit: () => mayRequest({ client, message, poster: posterOf(event, body, context, teamId), tellIfExternal: true }),
    });
  });

  app.message(async ({ message, body, context, client }) => {
    const subtype = 'subtype' in message ? message.subtype : undefined;
    if (!HUMAN_SUBTYPES.has(subtype)) return;
    if ('bot_id' in message && message.bot_id) return;
    if (!('user' in message) || !message.user) return;
    const text = 'text' in message && typeof message.text === 'string' ? message.text : '';
    const threadTs = 'thread_ts' in message && typeof message.thread_ts === 'string' ? message.thread_ts : undefined;
    const teamId = context.teamId ?? (body as { team_id: string }).team_id;
    const isDirect = message.channel_type === 'im';
    if (!isDirect) {
      // A channel post that mentions the bot is handled by app_mention; here only followed threads.
      if (threadTs === undefined || text.includes(`<@${botUserId}>`)) return;
      const followed = await isFollowed({ teamId, channel: message.channel, threadTs });
      if (!followed) return;
    }
    const incoming: IncomingMessage = {
      eventId: (body as { event_id: string }).event_id,
      teamId,
      channel: message.channel,
      userId: message.user,
      text,
      ts: message.ts,
      ...(threadTs ? { threadTs } : {}),
    };
    await accept({
      message: incoming,
      readEarlierMessages: false,
      startsFollowing: isDirect,
      // A partner's chatter in a followed thread is left out quietly; a direct message is answered.
      admit: () => mayRequest({ client, message: incoming, poster: posterOf(message as { user_team?: unknown; team?: unknown }, body, context, teamId), tellIfExternal: isDirect }),
    });
  });
}
