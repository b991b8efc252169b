import { SlackResponseError } from '../../errors/countersign-error.js';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AnswerStream } from '../../conversation/thread-messenger.js';
import { SLACK_LIMITS } from '../blocks/limits.js';
import type { MentionableUserIds } from '../format/neutralise-pings.js';
import { codeNodes, endOf, fenceOpenAt, indentedCodeAt, parseMarkdown, startOf } from '../format/parse-markdown.js';
import { isSafeMarkdown, safeMarkdown } from '../format/safe-markdown.js';
import { mayHaveBeenApplied } from '../unrepeated-slack-writes.js';
import { createFlushSchedule } from './flush-schedule.js';
import { findUnconfirmedPost, postedAfter, type UnconfirmedPost } from './unconfirmed-post.js';
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
  /** Who the answer may notify with `<@U…>`; anyone else it names is shown as `@name`. Default: nobody. */
  mentionableUserIds?: MentionableUserIds;
  maxMessageLength?: number;
  intervalMs?: number;
  now?: () => number;
}

/**
 * Streams an answer with Slack's native streaming (`chat.startStream` / `appendStream` /
 * `stopStream`), where Slack renders the markdown. Only whole lines are sent (a link or mention
 * split over two appends could otherwise slip past the checks), and what is sent is always the
 * `safeMarkdown` rendering of the whole answer so far, of which each append is the new end: the
 * parser decides what is code in the text so far, as it will in the finished text. A rendering that
 * no longer begins with what was sent (text read as code once turned out not to be), or a message
 * that would not be safe read on its own, is not sent; nor is anything once Slack refuses a call:
 * the answer then carries on as `chat.update` edits of the same messages. A long answer is stopped
 * and continued in a new stream before Slack's size limit. A `chat.startStream` whose reply was lost
 * may have started the stream: its message is looked for in the thread and, found, streamed on; not
 * found, Slack is taken not to have started it and the answer carries on as edits; when the thread
 * cannot be read, the edits look for it again before posting anything.
 */
export function createNativeAnswerStream(options: NativeAnswerStreamOptions): AnswerStream {
  const { client, logger, channel, threadTs } = options;
  const maxLength = options.maxMessageLength ?? SLACK_LIMITS.messageTextLength;
  const mentionableUserIds = options.mentionableUserIds ?? [];
  const messages: string[] = [];
  let markdown = '';
  /** How much of `markdown` has been rendered and sent. */
  let renderedUpTo = 0;
  /** The safe rendering sent so far, all messages together. */
  let sent = '';
  /**
   * The message being streamed; `unclosed`, the fence it reopened a code block with (after the
   * block's prefix) that no fence of the answer closes (see `fenceOpenAt`): open to the message's end.
   */
  let current: { ts: string; text: string; unclosed?: { prefix: string; fence: string } } | undefined;
  let fallback: AnswerStream | undefined;
  /** A started stream whose message could not be looked for (the thread could not be read). */
  let unconfirmed: UnconfirmedPost | undefined;

  async function stopCurrent(closing = ''): Promise<void> {
    if (current === undefined) return;
    const { ts } = current;
    current = undefined;
    await client.chat.stopStream({ channel, ts, ...(closing ? { markdown_text: closing } : {}) });
  }

  /** Sends `piece`, the part of `rendered` that follows `sent`, ending the message first if it would grow too long. */
  async function sendPiece(piece: string, rendered: string): Promise<void> {
    let text = piece;
    let unclosed: { prefix: string; fence: string } | undefined;
    // A piece that would close a block reopened with a fence no fence of the answer so far closes
    // (text after it would turn live) goes in a new message, which starts as the answer reads there.
    const closesUnclosed = current?.unclosed !== undefined && piece.includes(current.unclosed.fence);
    if (current !== undefined && (current.text.length + piece.length > maxLength || closesUnclosed)) {
      // A code block open at the cut is closed here and reopened in the next message: on the line of
      // the rest of its info string when the cut is in its opening line (after a space, so that a
      // tilde there cannot lengthen the fence). Both fences stand in the block's containers (its
      // indentation in a list item, its `>`), where the block's own closing fence closes it; so does
      // the rest of a code line cut in two, which without its `>` would leave the quote as text. The
      // fence closing the message is the one its block opened with there.
      const open = fenceOpenAt(rendered, sent.length);
      const midLine = !current.text.endsWith('\n');
      const closing = open === undefined ? undefined : (current.unclosed ?? open);
      await stopCurrent(closing === undefined ? '' : `${midLine ? '\n' : ''}${closing.prefix}${closing.fence}`);
      if (open !== undefined) {
        const reopening = `${open.prefix}${open.reopen}`;
        text = open.inOpeningLine ? `${reopening} ${piece}` : `${reopening}\n${midLine ? open.prefix : ''}${piece}`;
        if (open.reopen !== open.fence) unclosed = { prefix: open.prefix, fence: open.reopen };
      } else if (midLine) {
        // The rest of a line of an indented code block likewise needs its indentation and its `>`.
        text = `${indentedCodeAt(rendered, sent.length)?.prefix ?? ''}${piece}`;
      }
    }
    // Slack reads each message on its own, so each must be safe read that way.
    if (!isSafeMarkdown((current?.text ?? '') + text, { mentionableUserIds })) throw new Error('a message of the answer would not be safe on its own');
    if (current === undefined) {
      const ts = await startStream(text);
      current = { ts, text, ...(unclosed === undefined ? {} : { unclosed }) };
      messages.push(ts);
      options.onMessages?.([...messages]);
    } else {
      await client.chat.appendStream({ channel, ts: current.ts, markdown_text: text });
      current.text += text;
    }
    sent += piece;
  }

  /** Starts a message streaming `text`; its timestamp. One whose reply was lost is looked for rather than started again. */
  async function startStream(text: string): Promise<string> {
    const post = { text, after: postedAfter(messages.at(-1)) };
    try {
      const response = await client.chat.startStream({
        channel,
        thread_ts: threadTs,
        recipient_user_id: options.recipientUserId,
        recipient_team_id: options.recipientTeamId,
        markdown_text: text,
      });
      if (!response.ts) throw new SlackResponseError({ method: 'chat.startStream', missing: 'ts' });
      return response.ts;
    } catch (error) {
      if (!mayHaveBeenApplied(error)) throw error;
      const found = await findUnconfirmedPost({ client, channel, threadTs, post, known: messages }).catch((readError: unknown) => {
        unconfirmed = post;
        throw readError;
      });
      if (found === undefined) throw error;
      logger.info({ event: 'answer-post-found', ts: found }, 'a stream of the answer whose reply was lost is in the thread; the answer carries on in it');
      return found;
    }
  }

  /** Sends what `text`, the answer so far, adds to what was sent, in pieces that fit a message. */
  async function stream(text: string): Promise<void> {
    const rendered = safeMarkdown(text, { mentionableUserIds });
    if (!rendered.startsWith(sent)) throw new Error('the answer so far renders differently from what was streamed');
    while (rendered.slice(sent.length).trim() !== '') await sendPiece(nextPiece(rendered, sent.length, Math.floor(maxLength / 2)), rendered);
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
      ...(unconfirmed ? { unconfirmed } : {}),
      mentionableUserIds,
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
      if (fallback || end <= renderedUpTo) return;
      renderedUpTo = end;
      await stream(markdown.slice(0, end)).catch((error: unknown) => {
        degrade(error);
      });
    },
    hasMore: () => !fallback && wholeLinesEnd() > renderedUpTo,
  });

  return {
    append(delta) {
      markdown += delta;
      if (fallback) fallback.append(delta);
      else schedule.request();
    },
    async finish(final) {
      await schedule.stop();
      if (fallback) return fallback.finish(final);
      try {
        await stream(final);
        await stopCurrent();
      } catch (error) {
        markdown = final;
        await degrade(error).finish(final);
      }
    },
    messageTs: () => (fallback ? fallback.messageTs() : [...messages]),
  };
}

/**
 * The next piece to send of `rendered`, from `from`: whole lines up to `length`, else one long line
 * cut at a space (outside code spans where it can), else cut hard.
 */
function nextPiece(rendered: string, from: number, length: number): string {
  const rest = rendered.slice(from);
  if (rest.length <= length) return rest;
  const lineEnd = rest.lastIndexOf('\n', length - 1);
  if (lineEnd !== -1) return rest.slice(0, lineEnd + 1);
  // A cut in a code span would leave its backticks unmatched in both messages: its code live text.
  // Parsed from the cut before (outside a span where it could be) to twice a piece on, not the whole
  // answer per piece: a 64 KB line took 97 s of the event loop. A span closing further on is not seen.
  const spans = codeNodes(parseMarkdown(rest.slice(0, 2 * length))).filter((node) => node.type === 'inlineCode');
  const inSpan = (at: number) => spans.some((span) => startOf(span) < at && at < endOf(span));
  const lastSpace = rest.lastIndexOf(' ', length - 1);
  let space = lastSpace;
  while (space >= length / 2 && inSpan(space)) space = rest.lastIndexOf(' ', space - 1);
  // With no space outside a span in the second half, the span is cut as before.
  if (space < length / 2) space = lastSpace;
  if (space >= length / 2) return rest.slice(0, space + 1);
  const code = rest.charCodeAt(length - 1);
  return rest.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}
