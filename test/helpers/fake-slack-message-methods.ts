import { MESSAGE_BLOCKS_MAX } from './block-kit-limits.js';
import {
  invalidBlocksAnswer,
  isMissing,
  slackError,
  toSlackMessage,
  type SlackMethodHandler,
} from './fake-slack-answers.js';
import type { FakeSlackState, StoredSlackMessage } from './fake-slack-state.js';
import { compareSlackTs } from './slack-ts-clock.js';

const postMessage: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.channel)) return slackError('channel_not_found');
  if (isMissing(args.text) && isMissing(args.blocks) && isMissing(args.attachments)) return slackError('no_text');
  if (args.blocks !== undefined) {
    const invalid = invalidBlocksAnswer({ blocks: args.blocks, maxBlocks: MESSAGE_BLOCKS_MAX });
    if (invalid) return invalid;
  }
  const message = state.storeMessage({
    channel: String(args.channel),
    ts: state.nextTs(),
    ...(isMissing(args.thread_ts) ? {} : { thread_ts: String(args.thread_ts) }),
    user: state.identity.botUserId,
    bot_id: state.identity.botId,
    text: typeof args.text === 'string' ? args.text : '',
    ...(args.blocks !== undefined ? { blocks: args.blocks } : {}),
    ...(args.metadata !== undefined ? { metadata: args.metadata } : {}),
  });
  return { ok: true, channel: message.channel, ts: message.ts, message: toSlackMessage({ message, state }) };
};

const update: SlackMethodHandler = ({ args, state }) => {
  const found = findOwnMessage({ args, state, notOwnError: 'cant_update_message' });
  if ('ok' in found) return found;
  if (args.blocks !== undefined) {
    const invalid = invalidBlocksAnswer({ blocks: args.blocks, maxBlocks: MESSAGE_BLOCKS_MAX });
    if (invalid) return invalid;
  }
  // Slack keeps fields the update does not mention; `blocks: []` is how callers remove blocks.
  const { message } = found;
  if (typeof args.text === 'string') message.text = args.text;
  if (args.blocks !== undefined) message.blocks = args.blocks;
  if (args.metadata !== undefined) message.metadata = args.metadata;
  return { ok: true, channel: message.channel, ts: message.ts, text: message.text, message: toSlackMessage({ message, state }) };
};

const deleteMessage: SlackMethodHandler = ({ args, state }) => {
  const found = findOwnMessage({ args, state, notOwnError: 'cant_delete_message' });
  if ('ok' in found) return found;
  state.deleteMessage(found.message.channel, found.message.ts);
  return { ok: true, channel: found.message.channel, ts: found.message.ts };
};

const postEphemeral: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.channel)) return slackError('channel_not_found');
  if (isMissing(args.user)) return slackError('user_not_in_channel');
  if (isMissing(args.text) && isMissing(args.blocks) && isMissing(args.attachments)) return slackError('no_text');
  if (args.blocks !== undefined) {
    const invalid = invalidBlocksAnswer({ blocks: args.blocks, maxBlocks: MESSAGE_BLOCKS_MAX });
    if (invalid) return invalid;
  }
  // Ephemeral messages are visible to one user only and never show up in history.
  return { ok: true, message_ts: state.nextTs() };
};

/**
 * Lenient on purpose: a thread the fake has never seen (the parent only existed in an event
 * payload) answers an empty list instead of `thread_not_found`; seed it with addMessage.
 */
const replies: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.channel)) return slackError('channel_not_found');
  const thread = threadMessages({ state, channel: String(args.channel), threadTs: String(args.ts ?? '') });
  const limit = Number(args.limit);
  const page = Number.isInteger(limit) && limit > 0 ? thread.slice(0, limit) : thread;
  const replyCount = thread.length - 1;
  const messages = page.map((message, index) => ({
    ...toSlackMessage({ message, state }),
    ...(index === 0 && message.ts === args.ts && replyCount > 0 ? { thread_ts: message.ts, reply_count: replyCount } : {}),
  }));
  return { ok: true, messages, has_more: page.length < thread.length };
};

export function threadMessages(options: { state: FakeSlackState; channel: string; threadTs: string }): StoredSlackMessage[] {
  const channelMessages = options.state.messagesByChannel.get(options.channel) ?? [];
  return channelMessages
    .filter((message) => message.ts === options.threadTs || message.thread_ts === options.threadTs)
    .sort((left, right) => compareSlackTs(left.ts, right.ts));
}

function findOwnMessage(options: {
  args: Record<string, any>;
  state: FakeSlackState;
  notOwnError: string;
}): { message: StoredSlackMessage } | { ok: false; error: string } {
  const { args, state } = options;
  if (isMissing(args.channel)) return { ok: false, error: 'channel_not_found' };
  const message = state.findMessage(String(args.channel), String(args.ts ?? ''));
  if (!message) return { ok: false, error: 'message_not_found' };
  if (message.bot_id !== state.identity.botId) return { ok: false, error: options.notOwnError };
  return { message };
}

export const MESSAGE_METHODS: Record<string, SlackMethodHandler> = {
  'chat.postMessage': postMessage,
  'chat.update': update,
  'chat.delete': deleteMessage,
  'chat.postEphemeral': postEphemeral,
  'conversations.replies': replies,
};
