import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AnswerStream } from '../../conversation/thread-messenger.js';
import type { MentionableUserIds } from '../format/neutralise-pings.js';
import { showAnswerMessages, type ShownMessage } from './answer-messages.js';
import { createFlushSchedule } from './flush-schedule.js';
import { renderAnswer } from './render-answer.js';

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
  /** Who the answer may notify with `<@U…>`; anyone else it names is shown as `@name`. Default: nobody. */
  mentionableUserIds?: MentionableUserIds;
  intervalMs?: number;
  now?: () => number;
}

/**
 * Shows an answer while the model writes it: the first text is posted at once, then the message
 * is edited at most once per interval with everything so far, spilling into new messages before
 * Slack's size limit. Edits never overlap; a failed edit is logged and the next one catches up.
 */
export function createUpdatingAnswerStream(options: UpdatingAnswerStreamOptions): AnswerStream {
  const { client, logger, channel, threadTs } = options;
  let markdown = '';
  // Their text is unknown: a character no rendering contains makes every one of them be rewritten.
  let shown: ShownMessage[] = (options.replacing ?? []).map((ts) => ({ ts, text: '\u0000' }));

  const show = async (texts: string[]) => {
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
    });
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
