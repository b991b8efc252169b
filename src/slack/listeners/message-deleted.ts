import { type App, subtype } from '@slack/bolt';
import type { Logger } from 'pino';
import type { DeletedPost, StateStore } from '../../store/state-store.js';

/**
 * A queued message waits only behind its thread's running turn (a card does not hold the thread),
 * so an hour, as long as a delivery is remembered, outlasts any wait for take-in.
 */
export const DELETED_POST_TTL_MS = 60 * 60 * 1000;

export interface MessageDeletedOptions {
  store: StateStore;
  botUserId: string;
  logger: Logger;
}

/** The parts of a `message_deleted` event read here; the payload is untrusted, so each is checked. */
interface DeletionEvent {
  channel?: unknown;
  channel_type?: unknown;
  deleted_ts?: unknown;
  previous_message?: { user?: unknown; bot_id?: unknown; text?: unknown; thread_ts?: unknown } | undefined;
}

/**
 * The deleted post, when it is one the bot may have queued: a person's direct message, a reply in a
 * thread (followed or not: telling would cost a read of the whole thread, the marker one small
 * write), or a channel post mentioning the bot. Other deletions in the bot's channels are ignored.
 */
export function queuedPostOf(event: DeletionEvent, botUserId: string): DeletedPost | undefined {
  const { channel, deleted_ts: ts, previous_message: previous } = event;
  if (typeof channel !== 'string' || typeof ts !== 'string' || !previous) return undefined;
  if (typeof previous.user !== 'string' || previous.bot_id) return undefined;
  const inThread = typeof previous.thread_ts === 'string' && previous.thread_ts !== ts;
  const mentionsBot = typeof previous.text === 'string' && previous.text.includes(`<@${botUserId}>`);
  return event.channel_type === 'im' || inThread || mentionsBot ? { channel, ts } : undefined;
}

/**
 * A person who deletes a message takes the request back: if it still waits in its thread's queue,
 * it is not taken in (the take-in reads the marker under the thread's lock). A message already taken
 * in is not undone. Kept apart from the message listeners, which see only people talking.
 */
export function registerMessageDeleted(app: App, { store, botUserId, logger }: MessageDeletedOptions): void {
  app.message(subtype('message_deleted'), async ({ message }) => {
    const post = queuedPostOf(message as DeletionEvent, botUserId);
    if (!post) return;
    try {
      await store.markDeleted(post, DELETED_POST_TTL_MS);
    } catch (error) {
      // Slack has its ack and will not send the deletion again; a queued copy of the post still runs.
      logger.warn({ event: 'message-deletion-unrecorded', channel: post.channel, ts: post.ts, err: error }, 'could not record a deleted message');
    }
  });
}
