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

const MICROSECONDS_PER_SECOND = 1_000_000;

export function createFakeSlackState(options: { identity: SlackIdentity }): FakeSlackState {
  // ts is seconds + a 6-digit sequence; ordering by this number is Slack's ordering too.
  let lastTsMicroseconds = Math.floor(Date.now() / 1000) * MICROSECONDS_PER_SECOND;
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
    nextTs() {
      lastTsMicroseconds += 1;
      return formatTs(lastTsMicroseconds);
    },
    nextId(prefix) {
      idSequence += 1;
      return `${prefix}${String(idSequence).padStart(9, '0')}`;
    },
    noteTs(ts) {
      lastTsMicroseconds = Math.max(lastTsMicroseconds, tsToMicroseconds(ts));
    },
    findMessage(channel, ts) {
      return messagesByChannel.get(channel)?.find((message) => message.ts === ts);
    },
    storeMessage(message) {
      state.noteTs(message.ts);
      const channelMessages = messagesByChannel.get(message.channel) ?? [];
      channelMessages.push(message);
      channelMessages.sort((left, right) => compareTs(left.ts, right.ts));
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
      // The ts clock is deliberately not reset: ts stay unique across tests sharing one Redis.
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

export function compareTs(left: string, right: string): number {
  return tsToMicroseconds(left) - tsToMicroseconds(right);
}

function tsToMicroseconds(ts: string): number {
  const [seconds = '0', fraction = ''] = ts.split('.');
  return Number(seconds) * MICROSECONDS_PER_SECOND + Number(fraction.padEnd(6, '0').slice(0, 6));
}

function formatTs(microseconds: number): string {
  const seconds = Math.floor(microseconds / MICROSECONDS_PER_SECOND);
  const fraction = microseconds % MICROSECONDS_PER_SECOND;
  return `${seconds}.${String(fraction).padStart(6, '0')}`;
}
