import { compareSlackTs } from '../slack-ts-clock.js';
import type { StoredMessage } from '../state/message-log.js';
import type { WorkspaceState } from '../state/workspace-state.js';
import {
  blocksAndMetadata,
  blocksArgument,
  isMissing,
  messageBlocksProblem,
  slackError,
  stringArgument,
  toSlackMessage,
  type SlackAnswer,
  type SlackMethodHandler,
} from './method-answers.js';
import type { SlackArguments } from './slack-request-arguments.js';

const postMessage: SlackMethodHandler = ({ args, state }) => {
  const channel = stringArgument(args.channel);
  if (channel === undefined) return slackError('channel_not_found');
  const refused = refusedContent(args);
  if (refused) return refused;
  const threadTs = stringArgument(args.thread_ts);
  const message = state.messages.store({
    channel,
    ts: state.nextTs(),
    ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
    user: state.identity.botUserId,
    bot_id: state.identity.botId,
    text: typeof args.text === 'string' ? args.text : '',
    ...blocksAndMetadata(args),
  });
  if (threadTs !== undefined) clearThreadStatus({ state, channel, threadTs });
  return { ok: true, channel: message.channel, ts: message.ts, message: toSlackMessage({ message, state }) };
};

const update: SlackMethodHandler = ({ args, state }) => {
  const found = findOwnMessage({ args, state, notOwnError: 'cant_update_message' });
  if ('ok' in found) return found;
  const invalid = messageBlocksProblem(args);
  if (invalid) return invalid;
  // Slack keeps fields the update does not mention; `blocks: []` is how callers remove blocks.
  const message = state.messages.update({
    message: found.message,
    changes: {
      // New `text` is mrkdwn, even where a stream's markdown was.
      ...(typeof args.text === 'string' ? { text: args.text, format: undefined } : {}),
      ...blocksAndMetadata(args),
      edited: { user: state.identity.botUserId, ts: state.nextTs() },
    },
  });
  return { ok: true, channel: message.channel, ts: message.ts, text: message.text, message: toSlackMessage({ message, state }) };
};

const deleteMessage: SlackMethodHandler = ({ args, state }) => {
  const found = findOwnMessage({ args, state, notOwnError: 'cant_delete_message' });
  if ('ok' in found) return found;
  state.messages.remove(found.message);
  return { ok: true, channel: found.message.channel, ts: found.message.ts };
};

/** Ephemeral messages are visible to one user only and never show up in history. */
const postEphemeral: SlackMethodHandler = ({ args, state }) => {
  const channel = stringArgument(args.channel);
  if (channel === undefined) return slackError('channel_not_found');
  const user = stringArgument(args.user);
  if (user === undefined) return slackError('user_not_in_channel');
  const refused = refusedContent(args);
  if (refused) return refused;
  const threadTs = stringArgument(args.thread_ts);
  const blocks = blocksArgument(args.blocks);
  const ephemeral = state.ephemerals.post({
    channel,
    user,
    ...(threadTs === undefined ? {} : { threadTs }),
    text: typeof args.text === 'string' ? args.text : '',
    ...(blocks === undefined ? {} : { blocks }),
  });
  return { ok: true, message_ts: ephemeral.id };
};

/**
 * Lenient on purpose: a thread the emulator has never seen (the parent only existed in an event
 * payload) answers an empty list instead of `thread_not_found`. `oldest` keeps the messages after it,
 * as Slack does.
 */
const replies: SlackMethodHandler = ({ args, state }) => {
  const channel = stringArgument(args.channel);
  if (channel === undefined) return slackError('channel_not_found');
  const threadTs = String(args.ts ?? '');
  const oldest = stringArgument(args.oldest);
  const whole = state.messages.thread({ channel, threadTs });
  const thread = oldest === undefined ? whole : whole.filter((message) => compareSlackTs(message.ts, oldest) > 0);
  const limit = Number(args.limit);
  const page = Number.isInteger(limit) && limit > 0 ? thread.slice(0, limit) : thread;
  const replyCount = whole.length - 1;
  const messages = page.map((message, index) => ({
    ...toSlackMessage({ message, state }),
    ...(index === 0 && message.ts === threadTs && replyCount > 0 ? { thread_ts: message.ts, reply_count: replyCount } : {}),
  }));
  return { ok: true, messages, has_more: page.length < thread.length };
};

/** Links point at the workspace URL: the sandbox page when the emulator serves one. */
const getPermalink: SlackMethodHandler = ({ args, state }) => {
  const channel = stringArgument(args.channel);
  const ts = stringArgument(args.message_ts);
  if (channel === undefined) return slackError('channel_not_found');
  if (ts === undefined || !state.messages.find({ channel, ts })) return slackError('message_not_found');
  return { ok: true, channel, permalink: new URL(`archives/${channel}/p${ts.replace('.', '')}`, state.profile.url).toString() };
};

function refusedContent(args: SlackArguments): SlackAnswer | undefined {
  if (isMissing(args.text) && isMissing(args.blocks) && isMissing(args.attachments)) return slackError('no_text');
  return messageBlocksProblem(args);
}

/** Slack clears a thread's "is thinking…" status when the app replies in it. */
export function clearThreadStatus(options: { state: WorkspaceState; channel: string; threadTs: string }): void {
  if (options.state.statuses.has(`${options.channel}:${options.threadTs}`)) options.state.setStatus({ ...options, status: '' });
}

export function findOwnMessage(options: {
  args: SlackArguments;
  state: WorkspaceState;
  notOwnError: string;
}): { message: StoredMessage } | { ok: false; error: string } {
  const { args, state } = options;
  const channel = stringArgument(args.channel);
  if (channel === undefined) return slackError('channel_not_found');
  const message = state.messages.find({ channel, ts: String(args.ts ?? '') });
  if (!message) return slackError('message_not_found');
  if (message.bot_id !== state.identity.botId) return slackError(options.notOwnError);
  return { message };
}

export const MESSAGE_METHODS: Record<string, SlackMethodHandler> = {
  'chat.postMessage': postMessage,
  'chat.update': update,
  'chat.delete': deleteMessage,
  'chat.postEphemeral': postEphemeral,
  'chat.getPermalink': getPermalink,
  'conversations.replies': replies,
};
