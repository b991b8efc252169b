import { MESSAGE_BLOCKS_MAX } from './block-kit-limits.js';
import {
  invalidBlocksAnswer,
  isMissing,
  slackError,
  textFromChunks,
  toSlackMessage,
  type SlackAnswer,
  type SlackMethodHandler,
} from './fake-slack-answers.js';
import type { FakeSlackState, StoredSlackMessage } from './fake-slack-state.js';

/**
 * Slack's native streaming (chat.startStream / appendStream / stopStream): one message whose
 * text grows with every `markdown_text` (or markdown chunk) until the stream is stopped.
 */
const startStream: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.channel)) return slackError('channel_not_found');
  if (isMissing(args.thread_ts)) return slackError('invalid_arguments');
  // Slack needs to know whom a stream in a channel (not a DM) is for.
  if (!String(args.channel).startsWith('D') && (isMissing(args.recipient_user_id) || isMissing(args.recipient_team_id))) return slackError('invalid_arguments');
  const message = state.storeMessage({
    channel: String(args.channel),
    ts: state.nextTs(),
    thread_ts: String(args.thread_ts),
    user: state.identity.botUserId,
    bot_id: state.identity.botId,
    text: appendedText(args),
  });
  state.openStreams.add(streamKey(message));
  return { ok: true, channel: message.channel, ts: message.ts };
};

const appendStream: SlackMethodHandler = ({ args, state }) => {
  const found = findOpenStream({ args, state });
  if ('ok' in found) return found;
  found.message.text += appendedText(args);
  return { ok: true, channel: found.message.channel, ts: found.message.ts };
};

const stopStream: SlackMethodHandler = ({ args, state }) => {
  const found = findOpenStream({ args, state });
  if ('ok' in found) return found;
  if (args.blocks !== undefined) {
    const invalid = invalidBlocksAnswer({ blocks: args.blocks, maxBlocks: MESSAGE_BLOCKS_MAX });
    if (invalid) return invalid;
  }
  const { message } = found;
  message.text += appendedText(args);
  if (args.blocks !== undefined) message.blocks = args.blocks;
  if (args.metadata !== undefined) message.metadata = args.metadata;
  state.openStreams.delete(streamKey(message));
  return { ok: true, channel: message.channel, ts: message.ts, message: toSlackMessage({ message, state }) };
};

function appendedText(args: Record<string, any>): string {
  const markdownText = typeof args.markdown_text === 'string' ? args.markdown_text : '';
  return markdownText + textFromChunks(args.chunks);
}

function streamKey(message: Pick<StoredSlackMessage, 'channel' | 'ts'>): string {
  return `${message.channel}:${message.ts}`;
}

function findOpenStream(options: {
  args: Record<string, any>;
  state: FakeSlackState;
}): { message: StoredSlackMessage } | SlackAnswer & { ok: false } {
  const { args, state } = options;
  if (isMissing(args.channel)) return { ok: false, error: 'channel_not_found' };
  const message = state.findMessage(String(args.channel), String(args.ts ?? ''));
  if (!message) return { ok: false, error: 'message_not_found' };
  if (!state.openStreams.has(streamKey(message))) return { ok: false, error: 'message_not_in_streaming_state' };
  return { message };
}

export const STREAM_METHODS: Record<string, SlackMethodHandler> = {
  'chat.startStream': startStream,
  'chat.appendStream': appendStream,
  'chat.stopStream': stopStream,
};
