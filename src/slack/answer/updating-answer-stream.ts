import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AnswerStream } from '../../conversation/thread-messenger.js';
import type { MentionableUserIds } from '../format/neutralise-pings.js';
import { showAnswerMessages, type ShownMessage } from './answer-messages.js';
import { createFlushSchedule } from './flush-schedule.js';
import { renderAnswer } from './render-answer.js';
import { findUnconfirmedPost, type UnconfirmedPost } from './unconfirmed-post.js';

/** Slack allows about one `chat.update` per second per message before rate limiting. */
export const ANSWER_UPDATE_INTERVAL_MS = 1000;

export interface UpdatingAnswerStreamOptions {
  client: WebClient;
  logger: Logger;
  channel: string;
  threadTs: string;
  /** Told the answer's message timestamps whenever a message is added, so a crash can be cleaned up. */
  onMessages?: (ts: readonly string[]) => void;
  /** Messages to rewrite before posting new ones. */
  replacing?: readonly string[];
  /** A post Slack may have applied (its reply was lost), to look for before posting anything. */
  unconfirmed?: UnconfirmedPost;
  /** Who the answer may notify with `<@U…>`; anyone else it names is shown as `@name`. Default: nobody. */
  mentionableUserIds?: MentionableUserIds;
  intervalMs?: number;
  now?: () => number;
}

/**
 * Shows an answer while the model writes it: the first text is posted at once, then the message
 * is edited at most once per interval with everything so far, spilling into new messages before
 * Slack's size limit. Edits never overlap; a failed edit is logged and the next one catches up.
 * A post whose reply was lost may have been applied, so it is never simply made again: the thread is
 * read for it (`findUnconfirmedPost`), and the answer carries on in the message found; none found, the
 * post counts as failed (it was not applied) and the next flush posts it. Until the thread could be read,
 * nothing new is posted.
 */
export function createUpdatingAnswerStream(options: UpdatingAnswerStreamOptions): AnswerStream {
  const { client, logger, channel, threadTs } = options;
  let markdown = '';
  // Their text is unknown: a character no rendering contains makes every one of them be rewritten.
  let shown: ShownMessage[] = (options.replacing ?? []).map((ts) => ({ ts, text: '\u0000' }));
  let unconfirmed = options.unconfirmed;

  /** Looks for the message of the unconfirmed post: true when found, and then the answer's next message. Throws when the thread cannot be read. */
  const settle = async (): Promise<boolean> => {
    if (unconfirmed === undefined) return false;
    const post = unconfirmed;
    const ts = await findUnconfirmedPost({ client, channel, threadTs, post, known: shown.map((message) => message.ts) });
    unconfirmed = undefined;
    if (ts === undefined) {
      logger.warn({ event: 'answer-post-not-found' }, 'a post of the answer whose reply was lost is not in the thread; it counts as not posted');
      return false;
    }
    logger.info({ event: 'answer-post-found', ts }, 'a post of the answer whose reply was lost is in the thread; the answer carries on in it');
    shown = [...shown, { ts, text: post.text }];
    options.onMessages?.(shown.map((message) => message.ts));
    return true;
  };

  const show = async (texts: string[]) => {
    await settle();
    for (;;) {
      try {
        shown = await showAnswerMessages({
          client,
          channel,
          threadTs,
          shown,
          texts,
          onPosted: (posted) => {
            shown = [...posted];
            options.onMessages?.(posted.map((message) => message.ts));
          },
          onUnconfirmed: (post) => {
            unconfirmed = post;
          },
        });
        return;
      } catch (error) {
        // Found, the rest is shown from that message on; not found, the post failed as any other.
        if (!(await settle())) throw error;
      }
    }
  };
  // Each flush renders the text so far, and asks again whether more arrived: the last rendering is reused.
  let rendered: { markdown: string; texts: string[] } | undefined;
  const render = (text: string): string[] => {
    if (rendered?.markdown !== text) rendered = { markdown: text, texts: renderAnswer(text, { mentionableUserIds: options.mentionableUserIds ?? [] }) };
    return rendered.texts;
  };
  const isShown = (texts: string[]) => texts.length === shown.length && texts.every((text, index) => shown[index]?.text === text);

  const schedule = createFlushSchedule({
    intervalMs: options.intervalMs ?? ANSWER_UPDATE_INTERVAL_MS,
    ...(options.now ? { now: options.now } : {}),
    flush: async () => {
      const texts = render(markdown);
      if (texts.length === 0) return;
      await show(texts).catch((error: unknown) => logger.warn({ event: 'answer-update-failed', err: error }, 'could not update the answer in progress'));
    },
    hasMore: () => {
      const texts = render(markdown);
      return texts.length > 0 && !isShown(texts);
    },
  });

  return {
    append(delta) {
      markdown += delta;
      schedule.request();
    },
    async finish(final) {
      await schedule.stop();
      await show(render(final));
    },
    messageTs: () => shown.map((message) => message.ts),
  };
}
