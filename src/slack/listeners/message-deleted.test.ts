import { App, type Receiver } from '@slack/bolt';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../store/memory-store.js';
import { registerMessageDeleted } from './message-deleted.js';

const BOT = 'UBOT0001';
const THREAD = '1800000000.000100';
const DELETED = '1800000000.000200';

/** A `message_deleted` event as Slack sends it to a bot in the channel (or the DM). */
function deletion(options: { channel?: string; channelType?: 'channel' | 'im'; previous?: Record<string, unknown> }) {
  const channel = options.channel ?? 'C1';
  return {
    type: 'event_callback',
    team_id: 'T1',
    api_app_id: 'A1',
    event_id: `Ev${Math.random()}`,
    event_time: 3,
    event: {
      type: 'message',
      subtype: 'message_deleted',
      hidden: true,
      channel,
      channel_type: options.channelType ?? 'channel',
      ts: '1800000000.000900',
      event_ts: '1800000000.000900',
      deleted_ts: DELETED,
      ...(options.previous ? { previous_message: { type: 'message', ts: DELETED, ...options.previous } } : {}),
    },
  };
}

function listeningApp() {
  const store = createMemoryStore();
  const receiver: Receiver = { init() {}, start: async () => ({}), stop: async () => {} };
  const silent = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error' as never, setName() {} };
  const app = new App({ token: 'xoxb-x', botId: 'BBOT', botUserId: BOT, receiver, logger: silent as never });
  registerMessageDeleted(app, { store, botUserId: BOT, logger: pino({ level: 'silent' }) });
  const deliver = (body: object) => app.processEvent({ body, ack: async () => {} });
  const wasDeleted = (channel = 'C1') => store.wasDeleted({ channel, ts: DELETED });
  return { deliver, wasDeleted };
}

describe('a message deleted by its author', () => {
  it('is remembered when it was a reply in a thread, so a queued copy is not taken in', async () => {
    const { deliver, wasDeleted } = listeningApp();
    await deliver(deletion({ previous: { user: 'UALICE', text: 'restart prod please', thread_ts: THREAD } }));
    expect(await wasDeleted()).toBe(true);
  });

  it('is remembered when it was a direct message or a channel post mentioning the bot', async () => {
    const direct = listeningApp();
    await direct.deliver(deletion({ channel: 'D1', channelType: 'im', previous: { user: 'UALICE', text: 'restart prod please' } }));
    expect(await direct.wasDeleted('D1')).toBe(true);
    const mention = listeningApp();
    await mention.deliver(deletion({ previous: { user: 'UALICE', text: `<@${BOT}> restart prod please` } }));
    expect(await mention.wasDeleted()).toBe(true);
  });

  it('is not recorded when the bot could not have queued it: a plain channel post, a bot post, no previous message', async () => {
    const { deliver, wasDeleted } = listeningApp();
    await deliver(deletion({ previous: { user: 'UALICE', text: 'lunch?' } }));
    await deliver(deletion({ previous: { bot_id: 'B2', text: `<@${BOT}> hi`, thread_ts: THREAD } }));
    await deliver(deletion({}));
    expect(await wasDeleted()).toBe(false);
  });
});
