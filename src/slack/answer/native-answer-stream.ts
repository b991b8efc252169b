import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AnswerStream } from '../../conversation/thread-messenger.js';
import { SLACK_LIMITS } from '../blocks/limits.js';
import { safeMarkdownLine, type SafeMarkdownState } from '../format/safe-markdown.js';
import { createFlushSchedule } from './flush-schedule.js';
import { ANSWER_UPDATE_INTERVAL_MS, createUpdatingAnswerStream } from './updating-answer-stream.js';

/** Slack answers these when the app cannot stream at all; trying again per answer would only waste calls. */
const PERMANENT_ERRORS = new Set(['unknown_method', 'feature_not_enabled', 'method_deprecated', 'not_allowed_token_type', 'missing_scope']);

export interface NativeAnswerStreamOptions {
  client: WebClient;
  logger: Logger;
  channel: string;
  threadTs: string;
  recipientUserId: string;
  recipientTeamId: string;
  onMessages?: (ts: readonly string[]) => void;
  /** Told when Slack refuses streaming for good (the app lacks the feature), to stop trying. */
  onUnavailable?: (error: unknown) => void;
  maxMessageLength?: number;
  intervalMs?: number;
  now?: () => number;
}

/**
 * Streams an answer with Slack's native streaming (`chat.startStream` / `appendStream` /
 * `stopStream`), where Slack renders the markdown. Only whole lines are sent, each made safe by
 * `safeMarkdownLine`: a link or mention split over two appends could otherwise slip past the
 * checks. A long answer is stopped and continued in a new stream before Slack's size limit. If
 * Slack refuses any call, the answer carries on as `chat.update` edits of the same messages.
 */
export function createNativeAnswerStream(options: NativeAnswerStreamOptions): AnswerStream {
  const { client, logger, channel, threadTs } = options;
  const maxLength = options.maxMessageLength ?? SLACK_LIMITS.messageTextLength;
  const fences: SafeMarkdownState = {};
  const messages: string[] = [];
  let markdown = '';
  let sentUpTo = 0;
  let current: { ts: string; length: number } | undefined;
  /** The code block open at the end of what was sent, and at the end of the batch being built. */
  let sentFence: string | undefined;
  let batchFence: string | undefined;
  let fallback: AnswerStream | undefined;

  async function stopCurrent(closing = ''): Promise<void> {
    if (current === undefined) return;
    const { ts } = current;
    current = undefined;
    await client.chat.stopStream({ channel, ts, ...(closing ? { markdown_text: closing } : {}) });
  }

  /** `fenceAfter`: the code block still open after `text`, which a rollover must close and reopen. */
  async function sendPiece(text: string, fenceAfter: string | undefined): Promise<void> {
    if (current !== undefined && current.length + text.length > maxLength) {
      await stopCurrent(sentFence === undefined ? '' : `\n${sentFence}`);
      if (sentFence !== undefined) text = `${sentFence}\n${text}`;
    }
    if (current === undefined) {
      const response = await client.chat.startStream({
        channel,
        thread_ts: threadTs,
        recipient_user_id: options.recipientUserId,
        recipient_team_id: options.recipientTeamId,
        markdown_text: text,
      });
      if (!response.ts) throw new Error('chat.startStream returned no ts');
      current = { ts: response.ts, length: text.length };
      messages.push(response.ts);
      options.onMessages?.([...messages]);
    } else {
      await client.chat.appendStream({ channel, ts: current.ts, markdown_text: text });
      current.length += text.length;
    }
    sentFence = fenceAfter;
  }

  /** Sends raw markdown (whole lines, or the last line at the end), in pieces that fit a message. */
  async function send(raw: string): Promise<void> {
    const pieceLength = Math.floor(maxLength / 2);
    const lines = raw.split('\n');
    let batch = '';
    for (const [index, line] of lines.entries()) {
      const safe = safeMarkdownLine(line, fences) + (index < lines.length - 1 ? '\n' : '');
      if (batch !== '' && batch.length + safe.length > pieceLength) {
        await sendPiece(batch, batchFence);
        batch = '';
      }
      batch += safe;
      batchFence = fences.fence;
      // One line longer than a piece is sent in cuts; its fence state is the same throughout.
      while (batch.length > pieceLength) {
        await sendPiece(batch.slice(0, pieceLength), batchFence);
        batch = batch.slice(pieceLength);
      }
    }
    if (batch !== '') await sendPiece(batch, batchFence);
  }

  function degrade(error: unknown): AnswerStream {
    const code = (error as { data?: { error?: string } }).data?.error;
    logger.warn({ event: 'native-stream-failed', code, err: error }, 'native streaming failed; showing the answer with message edits');
    if (code !== undefined && PERMANENT_ERRORS.has(code) && messages.length === 0) options.onUnavailable?.(error);
    if (current !== undefined) void stopCurrent().catch(() => {});
    fallback = createUpdatingAnswerStream({
      client,
      logger,
      channel,
      threadTs,
      replacing: messages,
      ...(options.onMessages ? { onMessages: options.onMessages } : {}),
    });
    fallback.append(markdown);
    return fallback;
  }

  /** Where the whole lines written so far end. */
  const wholeLinesEnd = () => markdown.lastIndexOf('\n') + 1;
  const schedule = createFlushSchedule({
    intervalMs: options.intervalMs ?? ANSWER_UPDATE_INTERVAL_MS,
    ...(options.now ? { now: options.now } : {}),
    flush: async () => {
      const end = wholeLinesEnd();
      if (fallback || end <= sentUpTo) return;
      const lines = markdown.slice(sentUpTo, end);
      sentUpTo = end;
      await send(lines).catch((error: unknown) => {
        degrade(error);
      });
    },
    hasMore: () => !fallback && wholeLinesEnd() > sentUpTo,
  });

  return {
    append(delta) {
      markdown += delta;
      if (fallback) fallback.append(delta);
      else schedule.request();
    },
    async finish(final) {
      await schedule.stop();
      if (!fallback && !final.startsWith(markdown.slice(0, sentUpTo))) {
        markdown = final;
        degrade(new Error('the final answer differs from what was streamed'));
      }
      if (fallback) return fallback.finish(final);
      try {
        const rest = final.slice(sentUpTo);
        sentUpTo = final.length;
        if (rest.trim() !== '') await send(rest);
        await stopCurrent();
      } catch (error) {
        markdown = final;
        await degrade(error).finish(final);
      }
    },
    messageTs: () => (fallback ? fallback.messageTs() : [...messages]),
  };
}
