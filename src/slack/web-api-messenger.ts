import { CardPostUnconfirmedError, SlackCallError, SlackResponseError, type UnconfirmedCardPost } from '../errors/countersign-error.js';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AnswerStreaming } from '../config/environment.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { neutralisePings } from './format/markdown-to-mrkdwn.js';
import { isSlackUserId } from './format/mrkdwn-tokens.js';
import { createNativeAnswerStream } from './answer/native-answer-stream.js';
import { answerShowsNothing, withOpenCodeClosed } from './answer/render-answer.js';
import { createUpdatingAnswerStream } from './answer/updating-answer-stream.js';
import { buildApprovalCard } from './blocks/approval-card.js';
import { deleteFailure } from './delete-failure.js';
import { retryAfterMsOf } from './retry-after.js';
import { findUnconfirmedPost, laterTs, postedAfter } from './answer/unconfirmed-post.js';
import { mayHaveLanded, worthTryingLater } from './post-failure.js';
import { noticeBlocks } from './blocks/notice-blocks.js';
import { withPostMark } from './blocks/post-mark.js';

/** The Slack Web API side of the conversation: every outbound call the agent makes goes through here. */
export function createWebApiMessenger(options: { client: WebClient; logger: Logger; streaming?: AnswerStreaming }): ThreadMessenger {
  const { client, logger, streaming = 'update' } = options;
  let nativeAvailable = streaming === 'native';
  return {
    async postAnswer({ channel, threadTs, markdown, replacing, mentionableUserIds = [] }) {
      // An answer shown all at once is a stream that finishes straight away.
      const stream = createUpdatingAnswerStream({ client, logger, channel, threadTs, mentionableUserIds, ...(replacing ? { replacing } : {}) });
      await stream.finish(markdown);
      return stream.messageTs();
    },

    startAnswer({ channel, threadTs, recipientUserId, recipientTeamId, onMessages, replacing, guard, mentionableUserIds = [] }) {
      // Both modes apply the same rule: only these people may be notified by the answer.
      const common = { mentionableUserIds, ...(onMessages ? { onMessages } : {}) };
      // Every write the stream makes, its timed edits included, asks the guard first.
      const client = guard ? guardedClient(options.client, guard) : options.client;
      // A native stream cannot write into messages a dead process left, so those are edited instead.
      // Slack streams natively only to a person: a scheduled turn (`schedule:<name>`) has none.
      if (!nativeAvailable || (replacing !== undefined && replacing.length > 0) || !isSlackUserId(recipientUserId)) {
        return createUpdatingAnswerStream({ client, logger, channel, threadTs, ...common, ...(replacing ? { replacing } : {}) });
      }
      return createNativeAnswerStream({
        client,
        logger,
        channel,
        threadTs,
        recipientUserId,
        recipientTeamId,
        ...common,
        onUnavailable: () => {
          nativeAvailable = false;
        },
      });
    },

    answerShowsNothing: ({ markdown }) => answerShowsNothing(markdown),
    withOpenCodeClosed: ({ markdown }) => withOpenCodeClosed(markdown),

    async postNotice({ channel, threadTs, text, retryButton, unlessPostedAfter }) {
      // The bot's own notices name the people they are about (a grant's owner): only broadcasts are defused.
      const safe = neutralisePings(text, { mentionableUserIds: 'anyone' });
      if (unlessPostedAfter !== undefined) {
        const earlier = await findUnconfirmedPost({ client, channel, threadTs, post: { text: safe, after: unlessPostedAfter }, known: [] });
        if (earlier !== undefined) return;
      }
      // Shaped as no answer can be (see `noticeBlocks`): the model can copy a notice's words, not its blocks.
      await client.chat.postMessage({ channel, thread_ts: threadTs, text: safe, blocks: noticeBlocks(safe, retryButton ? { retryButton } : {}) });
    },

    async postMention({ channel, threadTs, text, unlessPostedAfter }) {
      // Said of each failure: whether a later try may succeed (the caller tries again then) or Slack refuses it.
      const failed = (method: string) => (error: unknown) => {
        throw new SlackCallError({ method, cause: error, tryLater: worthTryingLater(error) });
      };
      if (unlessPostedAfter !== undefined) {
        const post = { text, after: unlessPostedAfter };
        const earlier = await findUnconfirmedPost({ client, channel, threadTs, post, known: [] }).catch(failed('conversations.replies'));
        if (earlier !== undefined) return;
      }
      // The people it names are notified through `text`; the blocks tell it apart from an answer.
      await client.chat.postMessage({ channel, thread_ts: threadTs, text, blocks: noticeBlocks(text) }).catch(failed('chat.postMessage'));
    },

    async postStepCard({ step }) {
      const card = buildApprovalCard({ step });
      // A card posted again (`CardRefreshes`) has the text and blocks of the one on record, of any before
      // it, and of one another process posts again at the same time: only the mark is this post's alone.
      const { blocks, mark } = withPostMark(card.blocks);
      const after = step.cardTs === undefined ? postedAfter(undefined) : laterTs(postedAfter(undefined), step.cardTs);
      try {
        const response = await client.chat.postMessage({ channel: step.channel, thread_ts: step.threadTs, text: card.text, blocks });
        if (!response.ts) throw new SlackResponseError({ method: 'chat.postMessage', missing: 'ts' });
        return response.ts;
      } catch (error) {
        if (!mayHaveLanded(error)) throw cardPostFailure(error);
        // Slack may have posted it though its reply was lost (a 502, a timeout) or it answered
        // internal_error: a card found stands as the step's (its buttons decide), rather than live
        // beside a "could not post" notice, or beside a card posted again by a later try.
        const post = { text: card.text, after, mark };
        let found: string | undefined;
        try {
          found = await findPostedCard(client, { channel: step.channel, threadTs: step.threadTs, post });
        } catch (readError) {
          // Neither posted nor not: the caller keeps what finds it for a later look (`findPostedCard`).
          logger.warn({ event: 'card-post-unconfirmed', stepId: step.stepId, err: readError }, 'could not look for an approval card whose post lost its reply');
          throw new CardPostUnconfirmedError({ cause: error, post });
        }
        if (found === undefined) throw cardPostFailure(error);
        logger.warn({ event: 'card-post-reply-lost', stepId: step.stepId, ts: found }, 'the approval card was posted though its reply was lost');
        return found;
      }
    },

    findPostedCard: ({ channel, threadTs, post }) => findPostedCard(client, { channel, threadTs, post }),

    async updateStepCard({ step }) {
      const card = buildApprovalCard({ step });
      // Said of a failure: whether a later try may get past it, and when (the card is drawn again then, `CardRefreshes`).
      await client.chat.update({ channel: step.channel, ts: step.cardTs, text: card.text, blocks: card.blocks }).catch(throwUpdateFailure);
    },

    async postStepCopy({ step, target }) {
      const channel = target.kind === 'channel' ? target.channel : await openDirectMessage(client, target.userId);
      const card = buildApprovalCard({ step, placement: 'copy', copy: target });
      const response = await client.chat.postMessage({ channel, text: card.text, blocks: card.blocks });
      if (!response.ts) throw new SlackResponseError({ method: 'chat.postMessage', missing: 'ts' });
      const permalink = await permalinkOf(client, logger, { channel, ts: response.ts });
      return {
        kind: target.kind,
        channel,
        ts: response.ts,
        ...(target.kind === 'dm' ? { userId: target.userId } : {}),
        ...(permalink === undefined ? {} : { permalink }),
      };
    },

    async updateStepCopy({ step, copy }) {
      const card = buildApprovalCard({ step, placement: 'copy', copy });
      // As the thread's card: a copy Slack failed for now is drawn again later (`showStep`).
      await client.chat.update({ channel: copy.channel, ts: copy.ts, text: card.text, blocks: card.blocks }).catch(throwUpdateFailure);
    },

    permalinkOf: (message) => permalinkOf(client, logger, message),

    async postEphemeral({ channel, userId, threadTs, text }) {
      await client.chat.postEphemeral({ channel, user: userId, text, ...(threadTs ? { thread_ts: threadTs } : {}) });
    },

    async setStatus({ channel, threadTs, status }) {
      try {
        await client.assistant.threads.setStatus({ channel_id: channel, thread_ts: threadTs, status });
      } catch (error) {
        logger.debug({ event: 'status-failed', err: error }, 'could not set thread status');
      }
    },

    async deleteMessages({ channel, ts }) {
      for (const [index, each] of ts.entries()) {
        try {
          await client.chat.delete({ channel, ts: each });
        } catch (error) {
          const failure = deleteFailure(error);
          if (failure.gone) continue;
          // Slack is failing or throttling: the rest would fare no better now, so all of it is for later.
          logger.warn({ event: 'message-delete-failed', channel, ts: each, err: error }, 'could not delete a message; it is tried again later');
          return { ts: ts.slice(index), ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }) };
        }
      }
      return { ts: [] };
    },

    async readThread({ channel, threadTs }) {
      const response = await client.conversations.replies({ channel, ts: threadTs, limit: 200 });
      return (response.messages ?? []).map((message) => ({
        ts: message.ts ?? '',
        ...(message.user ? { userId: message.user } : {}),
        fromBot: Boolean(message.bot_id),
        text: message.text ?? '',
      }));
    },
  };
}

/** The card a post whose reply was lost left in the thread, found by its mark (`withPostMark`). */
function findPostedCard(client: WebClient, { channel, threadTs, post }: { channel: string; threadTs: string; post: UnconfirmedCardPost }): Promise<string | undefined> {
  return findUnconfirmedPost({ client, channel, threadTs, post: { text: post.text, after: post.after, carrying: post.mark }, known: [] });
}

/**
 * A card's post Slack did not apply, as thrown: one a later try may get past (Slack failing or
 * throttling for now, `worthTryingLater`) says so (`SlackCallError.tryLater`), so a card posted again
 * is tried later instead of given up; Slack's refusal is thrown as it came (a notice quotes it).
 */
function cardPostFailure(error: unknown): unknown {
  if (!worthTryingLater(error)) return error;
  const retryAfterMs = retryAfterMsOf(error);
  return new SlackCallError({ method: 'chat.postMessage', cause: error, tryLater: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
}

/** A card's `chat.update` that failed, as thrown: whether a later try may get past it (`SlackCallError.tryLater`), and when. */
function throwUpdateFailure(error: unknown): never {
  const retryAfterMs = retryAfterMsOf(error);
  throw new SlackCallError({ method: 'chat.update', cause: error, tryLater: worthTryingLater(error), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
}

/** The bot's DM channel with a user (`conversations.open` answers the same one every time). */
async function openDirectMessage(client: WebClient, userId: string): Promise<string> {
  const response = await client.conversations.open({ users: userId });
  const channel = response.channel?.id;
  if (!channel) throw new SlackResponseError({ method: 'conversations.open', missing: 'channel.id' });
  return channel;
}

async function permalinkOf(client: WebClient, logger: Logger, { channel, ts }: { channel: string; ts: string }): Promise<string | undefined> {
  try {
    return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink;
  } catch (error) {
    logger.debug({ event: 'permalink-failed', err: error }, 'could not get a permalink');
    return undefined;
  }
}

/** A client whose `chat.*` calls each await `guard` first. */
function guardedClient(client: WebClient, guard: () => Promise<void>): WebClient {
  const chat = new Proxy(client.chat, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await guard();
        return (value as (...inner: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return new Proxy(client, { get: (target, property, receiver) => (property === 'chat' ? chat : Reflect.get(target, property, receiver)) });
}
