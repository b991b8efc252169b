import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AnswerStream } from '../../conversation/thread-messenger.js';
import { showAnswerMessages, type ShownMessage } from './answer-messages.js';
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
  const intervalMs = options.intervalMs ?? ANSWER_UPDATE_INTERVAL_MS;
  const now = options.now ?? Date.now;
  let markdown = '';
  // Their text is unknown: a character no rendering contains makes every one of them be rewritten.
  let shown: ShownMessage[] = (options.replacing ?? []).map((ts) => ({ ts, text: '\u0000' }));
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  let lastFlushAt = Number.NEGATIVE_INFINITY;
  let finished = false;

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

  const schedule = () => {
    if (finished || timer !== undefined || flushing !== undefined) return;
    timer = setTimeout(flush, Math.max(0, lastFlushAt + intervalMs - now()));
  };

  function flush(): void {
    timer = undefined;
    const texts = renderAnswer(markdown);
    if (texts.length === 0) return;
    flushing = show(texts)
      .catch((error: unknown) => logger.warn({ event: 'answer-update-failed', err: error }, 'could not update the answer in progress'))
      .finally(() => {
        flushing = undefined;
        lastFlushAt = now();
        if (renderAnswer(markdown).join('\u0000') !== shown.map((message) => message.text).join('\u0000')) schedule();
      });
  }

  return {
    append(delta) {
      markdown += delta;
      schedule();
    },
    async finish(final) {
      finished = true;
      clearTimeout(timer);
      timer = undefined;
      await flushing;
      await show(renderAnswer(final));
    },
    messageTs: () => shown.map((message) => message.ts),
  };
}
