import type { StoredMessage } from '../state/message-log.js';
import type { WorkspaceState } from '../state/workspace-state.js';
import { clearThreadStatus } from './message-methods.js';
import {
  blocksAndMetadata,
  isMissing,
  messageBlocksProblem,
  slackError,
  stringArgument,
  textFromChunks,
  toSlackMessage,
  type SlackMethodHandler,
} from './method-answers.js';
import type { SlackArguments } from './slack-request-arguments.js';

/**
 * Slack's native streaming (chat.startStream / appendStream / stopStream): one message whose
 * text grows with every `markdown_text` (or markdown chunk) until the stream is stopped.
 */
const startStream: SlackMethodHandler = ({ args, state }) => {
  const channel = stringArgument(args.channel);
  const threadTs = stringArgument(args.thread_ts);
  if (channel === undefined) return slackError('channel_not_found');
  if (threadTs === undefined) return slackError('invalid_arguments');
  // Slack needs to know whom a stream in a channel (not a DM) is for.
  if (!channel.startsWith('D') && (isMissing(args.recipient_user_id) || isMissing(args.recipient_team_id))) return slackError('invalid_arguments');
  const message = state.messages.store({
    channel,
    ts: state.nextTs(),
    thread_ts: threadTs,
    user: state.identity.botUserId,
    bot_id: state.identity.botId,
    text: appendedText(args),
    format: 'markdown',
  });
  state.messages.startStream(message);
  clearThreadStatus({ state, channel, threadTs });
  return { ok: true, channel: message.channel, ts: message.ts };
};

const appendStream: SlackMethodHandler = ({ args, state }) => {
  const found = findOpenStream({ args, state });
  if ('ok' in found) return found;
  const message = state.messages.update({ message: found.message, changes: { text: found.message.text + appendedText(args) } });
  return { ok: true, channel: message.channel, ts: message.ts };
};

const stopStream: SlackMethodHandler = ({ args, state }) => {
  const found = findOpenStream({ args, state });
  if ('ok' in found) return found;
  const invalid = messageBlocksProblem(args);
  if (invalid) return invalid;
  const message = state.messages.update({ message: found.message, changes: { text: found.message.text + appendedText(args), ...blocksAndMetadata(args) } });
  state.messages.stopStream(message);
  return { ok: true, channel: message.channel, ts: message.ts, message: toSlackMessage({ message, state }) };
};

function appendedText(args: SlackArguments): string {
  const markdownText = typeof args.markdown_text === 'string' ? args.markdown_text : '';
  return markdownText + textFromChunks(args.chunks);
}

function findOpenStream(options: { args: SlackArguments; state: WorkspaceState }): { message: StoredMessage } | { ok: false; error: string } {
  const { args, state } = options;
  const channel = stringArgument(args.channel);
  if (channel === undefined) return slackError('channel_not_found');
  const message = state.messages.find({ channel, ts: String(args.ts ?? '') });
  if (!message) return slackError('message_not_found');
  if (!state.messages.isStreaming(message)) return slackError('message_not_in_streaming_state');
  return { message };
}

export const STREAM_METHODS: Record<string, SlackMethodHandler> = {
  'chat.startStream': startStream,
  'chat.appendStream': appendStream,
  'chat.stopStream': stopStream,
};
