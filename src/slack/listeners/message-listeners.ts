import { context, SpanKind, type Tracer } from '@opentelemetry/api';
import type { App } from '@slack/bolt';
import { countersignTracer, inSpan, traceparentOf } from '../../tracing/trace-context.js';
import type { Logger } from 'pino';
import { shortError } from '../../conversation/short-error.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { ThreadWorker } from '../../conversation/thread-worker.js';
import { stripBotMention } from '../../conversation/user-messages.js';
import type { MessageWorkItem } from '../../conversation/work-item.js';
import type { StateStore } from '../../store/state-store.js';
import { newThreadState, threadKeyOf } from '../../store/thread-state.js';

/** Slack retries a delivery for about five minutes; remembering it for an hour covers every retry. */
const DELIVERY_DEDUPE_TTL_MS = 60 * 60 * 1000;

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
  tracer?: Tracer;
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
  const { store, worker, messenger, botUserId, logger, followTtlMs } = options;
  const tracer = options.tracer ?? countersignTracer();

  async function accept(message: IncomingMessage, readEarlierMessages: boolean, startsFollowing: boolean): Promise<void> {
    try {
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
      await messenger
        .postNotice({
          channel: message.channel,
          threadTs: message.threadTs ?? message.ts,
          text: `:warning: I could not take this message (${shortError(error)}). Nothing was run; please send it again in a moment.`,
        })
        .catch(() => {});
    }
  }

  async function enqueue(message: IncomingMessage, readEarlierMessages: boolean, startsFollowing: boolean, traceparent: string | undefined): Promise<void> {
    const first = await store.claimOnce([`event:${message.eventId}`, `post:${message.channel}:${message.ts}`], DELIVERY_DEDUPE_TTL_MS);
    if (!first) {
      logger.debug({ event: 'delivery-duplicate', eventId: message.eventId }, 'ignored a repeated delivery');
      return;
    }
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
    await worker.submit(threadKeyOf(item), item);
  }

  app.event('app_mention', async ({ event, body, context }) => {
    if (event.bot_id || !event.user) return;
    await accept(
      {
        eventId: body.event_id,
        teamId: context.teamId ?? body.team_id,
        channel: event.channel,
        userId: event.user,
        text: event.text,
        ts: event.ts,
        ...(event.thread_ts ? { threadTs: event.thread_ts } : {}),
      },
      event.thread_ts !== undefined && event.thread_ts !== event.ts,
      true,
    );
  });

  app.message(async ({ message, body, context }) => {
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
      const followed = await store.getThread(threadKeyOf({ teamId, channel: message.channel, threadTs }));
      if (!followed) return;
    }
    await accept(
      {
        eventId: (body as { event_id: string }).event_id,
        teamId,
        channel: message.channel,
        userId: message.user,
        text,
        ts: message.ts,
        ...(threadTs ? { threadTs } : {}),
      },
      false,
      isDirect,
    );
  });
}
