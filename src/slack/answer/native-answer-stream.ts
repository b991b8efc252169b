import { SlackResponseError } from '../../errors/countersign-error.js';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AnswerStream } from '../../conversation/thread-messenger.js';
import { SLACK_LIMITS } from '../blocks/limits.js';
import type { MentionableUserIds } from '../format/neutralise-pings.js';
import { hasDefinitions, parseMarkdown } from '../format/parse-markdown.js';
import { isSafeMarkdown, parsedSafeMarkdown } from '../format/safe-markdown.js';
import { mayHaveBeenApplied } from '../unrepeated-slack-writes.js';
import { cleanCutsOf, renumberedItemReadsTheSame, type CleanCut } from './clean-cuts.js';
import { createFlushSchedule } from './flush-schedule.js';
import { codeRangesOf, readsAsInAnswer, type CodeRanges } from './reads-as-in-answer.js';
import { nextRollover } from './rollover.js';
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
 * and continued in a new stream before Slack's size limit, only at a clean cut (see `cleanCutsOf`),
 * where the next message reads as the same blocks on its own (see `nextRollover` for which one).
 * Text that fits no message up to its next clean cut (a paragraph or a list item longer than a
 * message), or a message that would still read otherwise on its own than in the whole answer, is
 * shown as edits too, rather than cut where code would turn live text, or text code. So is an
 * answer with a link reference or footnote definition: Slack reads each message on its own, and a
 * definition in one changes how text in another reads (which backticks make code), even in one
 * already stopped; the edits rewrite the messages streamed. A `chat.startStream` whose reply was lost
 * may have started the stream: its message is looked for in the thread and, found, streamed on; not
 * found, Slack is taken not to have started it and the answer carries on as edits; when the thread
 * cannot be read, the edits look for it again before posting anything.
 */
export function createNativeAnswerStream(options: NativeAnswerStreamOptions): AnswerStream {
  const { client, logger, channel, threadTs } = options;
  const maxLength = options.maxMessageLength ?? SLACK_LIMITS.messageTextLength;
  const softLength = Math.floor(maxLength / 2);
  const mentionableUserIds = options.mentionableUserIds ?? [];
  const messages: string[] = [];
  let markdown = '';
  /** How much of `markdown` has been rendered and sent. */
  let renderedUpTo = 0;
  /** The safe rendering sent so far, all messages together. */
  let sent = '';
  /**
   * The message being streamed: from `bodyAt`, the rendered answer's text from `answerAt`; `renumbered`,
   * the cut it started at when that rewrote the number of the list item it starts with.
   */
  let current: { ts: string; text: string; bodyAt: number; answerAt: number; renumbered?: CleanCut } | undefined;
  /** What the next message starts with before the answer's text: a code block's opening line, reopening it, or a list item's number. */
  let reopening = '';
  /** The cut the next message starts at, when `reopening` is a list item's number in place of the one written. */
  let renumbered: CleanCut | undefined;
  let fallback: AnswerStream | undefined;
  /** A started stream whose message could not be looked for (the thread could not be read). */
  let unconfirmed: UnconfirmedPost | undefined;

  async function stopCurrent(closing = ''): Promise<void> {
    if (current === undefined) return;
    const { ts } = current;
    current = undefined;
    await client.chat.stopStream({ channel, ts, ...(closing ? { markdown_text: closing } : {}) });
  }

  /**
   * Sends `piece`, the part of the rendered answer that follows `sent`, in the message being
   * streamed or a new one; `answerCode`, where the rendered answer has code.
   */
  async function sendPiece(piece: string, answerCode: CodeRanges): Promise<void> {
    const text = current === undefined ? reopening + piece : piece;
    const message = (current?.text ?? '') + text;
    // Slack reads each message on its own, so each must be safe read that way, and read as the whole answer does.
    // One parse of the message serves both checks: it is up to a whole message long, and read at every flush.
    const messageTree = parseMarkdown(message);
    if (!isSafeMarkdown(message, { mentionableUserIds, tree: messageTree })) throw new Error('a message of the answer would not be safe on its own');
    const { bodyAt, answerAt } = current ?? { bodyAt: reopening.length, answerAt: sent.length };
    if (!readsAsInAnswer({ answerCode, message, messageTree, bodyAt, answerAt })) throw new Error('a message of the answer would read otherwise on its own');
    if (current === undefined) {
      const ts = await startStream(text);
      current = { ts, text, bodyAt, answerAt, ...(renumbered ? { renumbered } : {}) };
      reopening = '';
      renumbered = undefined;
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

  /** Sends what `text`, the answer so far, adds to what was sent, starting new messages at clean cuts. */
  async function stream(text: string): Promise<void> {
    const { markdown: rendered, tree } = parsedSafeMarkdown(text, { mentionableUserIds });
    // A definition changes how text anywhere before it reads, in messages already stopped too.
    if (hasDefinitions(tree)) throw new Error('the answer defines a link label or footnote, which can change how messages already sent read');
    if (!rendered.startsWith(sent)) throw new Error('the answer so far renders differently from what was streamed');
    // The item's new lines could fall out of it there, at the column the rewritten number sets.
    if (current?.renumbered && !renumberedItemReadsTheSame({ rendered, tree, cut: current.renumbered })) {
      throw new Error('the list item a message starts with, renumbered, would read otherwise on its own');
    }
    const contentEnd = rendered.trimEnd().length;
    const answerCode = codeRangesOf(tree);
    const cuts = cleanCutsOf({ rendered, tree });
    while (sent.length < contentEnd) {
      const from = sent.length;
      const rollover = nextRollover({
        used: current?.text.length ?? reopening.length,
        streaming: current !== undefined,
        from,
        end: rendered.length,
        cuts: () => cuts({ from, to: from + maxLength }),
        softLength,
        maxLength,
      });
      if (rollover === undefined) throw new Error('the answer has no clean cut before a message’s size limit');
      const { cut } = rollover;
      if (cut === undefined) return sendPiece(rendered.slice(from), answerCode);
      if (cut.at > from) await sendPiece(rendered.slice(from, cut.at), answerCode);
      await stopCurrent(cut.closing);
      reopening = cut.reopening;
      renumbered = cut.resume > cut.at ? cut : undefined;
      // What `reopening` shows in place of (an ordered list item's written number) counts as sent: it is the rendered answer's.
      sent += rendered.slice(cut.at, cut.resume);
    }
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
