import { advanceSlackTsPast, compareSlackTs, nextSlackTs } from './slack-ts-clock.js';

/**
 * What the fake Slack workspace remembers between calls: messages (so chat.update and
 * conversations.replies behave like Slack), open views, used trigger ids and reactions.
 */
export interface StoredSlackMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  text: string;
  blocks?: any[];
  metadata?: any;
}

export interface SlackIdentity {
  botUserId: string;
  botId: string;
  teamId: string;
  appId: string;
}

export interface StoredSlackView {
  view: Record<string, any>;
  hash: string;
}

export interface FakeSlackState {
  identity: SlackIdentity;
  messagesByChannel: Map<string, StoredSlackMessage[]>;
  /** `${channel}:${ts}` of streams started and not yet stopped. */
  openStreams: Set<string>;
  views: Map<string, StoredSlackView>;
  usedTriggerIds: Set<string>;
  /** `${channel}:${timestamp}:${name}`. */
  reactions: Set<string>;
  usergroupUsers: Map<string, string[]>;
  nextTs(): string;
  nextId(prefix: string): string;
  /** Keeps generated ts after any seeded one, so newer messages always sort last. */
  noteTs(ts: string): void;
  findMessage(channel: string, ts: string): StoredSlackMessage | undefined;
  storeMessage(message: StoredSlackMessage): StoredSlackMessage;
  deleteMessage(channel: string, ts: string): void;
  clear(): void;
}

export function createFakeSlackState(options: { identity: SlackIdentity }): FakeSlackState {
  let idSequence = 0;
  const messagesByChannel = new Map<string, StoredSlackMessage[]>();
  const state: FakeSlackState = {
    identity: options.identity,
    messagesByChannel,
    openStreams: new Set(),
    views: new Map(),
    usedTriggerIds: new Set(),
    reactions: new Set(),
    usergroupUsers: new Map(),
    nextTs: nextSlackTs,
    nextId(prefix) {
      idSequence += 1;
      return `${prefix}${String(idSequence).padStart(9, '0')}`;
    },
    noteTs: advanceSlackTsPast,
    findMessage(channel, ts) {
      return messagesByChannel.get(channel)?.find((message) => message.ts === ts);
    },
    storeMessage(message) {
      state.noteTs(message.ts);
      const channelMessages = messagesByChannel.get(message.channel) ?? [];
      channelMessages.push(message);
      channelMessages.sort((left, right) => compareSlackTs(left.ts, right.ts));
      messagesByChannel.set(message.channel, channelMessages);
      return message;
    },
    deleteMessage(channel, ts) {
      const channelMessages = messagesByChannel.get(channel) ?? [];
      messagesByChannel.set(
        channel,
        channelMessages.filter((message) => message.ts !== ts),
      );
    },
    clear() {
      // The ts clock is shared and never reset: ts stay unique across tests sharing one Redis.
      messagesByChannel.clear();
      state.openStreams.clear();
      state.views.clear();
      state.usedTriggerIds.clear();
      state.reactions.clear();
      state.usergroupUsers.clear();
    },
  };
  return state;
}
