import { advanceSlackTsPast, compareSlackTs } from '../slack-ts-clock.js';

/** A channel message as the emulated workspace keeps it; thread replies carry `thread_ts`. */
export interface StoredMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  text: string;
  blocks?: unknown[];
  metadata?: unknown;
  /** Set by chat.update, like the `edited` Slack puts on changed messages. */
  edited?: { user: string; ts: string };
  /**
   * `markdown`: `text` is the `markdown_text` of a native stream, which Slack renders as Markdown
   * rather than mrkdwn. Only the page reads it: Web API answers leave it out.
   */
  format?: 'markdown';
}

export type MessageChanges = Partial<Pick<StoredMessage, 'text' | 'blocks' | 'metadata' | 'edited' | 'format'>>;

/**
 * Every channel's messages in ts order, so chat.update, conversations.replies and the sandbox page
 * see what Slack would show; plus which messages are native streams still being written.
 */
export interface MessageLog {
  /** Every channel's messages, oldest first. */
  all(): StoredMessage[];
  inChannel(channel: string): StoredMessage[];
  /** The parent and its replies, oldest first. */
  thread(options: { channel: string; threadTs: string }): StoredMessage[];
  find(options: { channel: string; ts: string }): StoredMessage | undefined;
  store(message: StoredMessage): StoredMessage;
  update(options: { message: StoredMessage; changes: MessageChanges }): StoredMessage;
  remove(options: { channel: string; ts: string }): boolean;
  startStream(message: StoredMessage): void;
  isStreaming(message: Pick<StoredMessage, 'channel' | 'ts'>): boolean;
  stopStream(message: StoredMessage): void;
  clear(): void;
}

export function createMessageLog(options: { onChange: () => void }): MessageLog {
  const byChannel = new Map<string, StoredMessage[]>();
  /** `${channel}:${ts}` of streams started and not yet stopped. */
  const openStreams = new Set<string>();
  const streamKey = (message: Pick<StoredMessage, 'channel' | 'ts'>) => `${message.channel}:${message.ts}`;
  const byTs = (left: StoredMessage, right: StoredMessage) => compareSlackTs(left.ts, right.ts);

  const log: MessageLog = {
    all: () => [...byChannel.values()].flat().sort(byTs),
    inChannel: (channel) => byChannel.get(channel) ?? [],
    thread: ({ channel, threadTs }) => log.inChannel(channel).filter((message) => message.ts === threadTs || message.thread_ts === threadTs),
    find: ({ channel, ts }) => log.inChannel(channel).find((message) => message.ts === ts),
    store(message) {
      // Keeps generated ts after any seeded one, so newer messages always sort last.
      advanceSlackTsPast(message.ts);
      // A copy, as before: a list handed out earlier stays as it was. Placed after every message
      // with a ts not later than its own (where a stable sort of the whole channel put it), found
      // by bisection: re-sorting the channel on every post made each post cost the channel's size.
      const channelMessages = [...log.inChannel(message.channel)];
      channelMessages.splice(insertionIndex(channelMessages, message), 0, message);
      byChannel.set(message.channel, channelMessages);
      options.onChange();
      return message;
    },
    update({ message, changes }) {
      Object.assign(message, changes);
      options.onChange();
      return message;
    },
    remove({ channel, ts }) {
      const channelMessages = log.inChannel(channel);
      const kept = channelMessages.filter((message) => message.ts !== ts);
      byChannel.set(channel, kept);
      openStreams.delete(streamKey({ channel, ts }));
      if (kept.length !== channelMessages.length) options.onChange();
      return kept.length !== channelMessages.length;
    },
    startStream(message) {
      openStreams.add(streamKey(message));
      options.onChange();
    },
    isStreaming: (message) => openStreams.has(streamKey(message)),
    stopStream(message) {
      openStreams.delete(streamKey(message));
      options.onChange();
    },
    clear() {
      byChannel.clear();
      openStreams.clear();
      options.onChange();
    },
  };
  return log;
}

/** The index after the last message whose ts is not later than `message`'s; `messages` is in ts order. */
function insertionIndex(messages: readonly StoredMessage[], message: StoredMessage): number {
  let low = 0;
  let high = messages.length;
  // Generated ts only grow: almost every post lands at the end, decided by one comparison.
  if (high === 0 || compareSlackTs((messages[high - 1] as StoredMessage).ts, message.ts) <= 0) return high;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareSlackTs((messages[middle] as StoredMessage).ts, message.ts) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
