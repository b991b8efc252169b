import { App, type Receiver } from '@slack/bolt';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { EarlierThreadMessage, ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { ThreadWorker } from '../../conversation/thread-worker.js';
import type { WorkItem } from '../../conversation/work-item.js';
import { createMemoryStore } from '../../store/memory-store.js';
import type { StateStore } from '../../store/state-store.js';
import { redisDown } from './bolt-listener.test-support.js';
import { registerMessageListeners } from './message-listeners.js';

const BOT = 'UBOT0001';
const THREAD = '1800000000.000100';

function mention(options: { eventId: string; ts: string; text: string; edited?: { user: string; ts: string } }) {
  return {
    type: 'event_callback',
    team_id: 'T1',
    api_app_id: 'A1',
    event_id: options.eventId,
    event_time: 1,
    event: {
      type: 'app_mention',
      user: 'UALICE',
      text: options.text,
      ts: options.ts,
      channel: 'C1',
      event_ts: options.ts,
      ...(options.edited ? { edited: options.edited } : {}),
    },
  };
}

/** A reply in `threadTs` without a mention, as Slack sends it to a bot in the channel. */
function threadReply(options: { eventId: string; ts: string; threadTs: string; text: string }) {
  return {
    type: 'event_callback',
    team_id: 'T1',
    api_app_id: 'A1',
    event_id: options.eventId,
    event_time: 2,
    event: { type: 'message', channel_type: 'channel', user: 'UALICE', text: options.text, ts: options.ts, thread_ts: options.threadTs, channel: 'C1', event_ts: options.ts },
  };
}

/** A store whose every call fails as an unreachable Redis does while `isDown()`; `failures` counts them. */
function outageStore(real: StateStore, isDown: () => boolean) {
  const state = { failures: 0, onFailure: () => {} };
  const store = new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!isDown()) return value.apply(target, args);
        state.failures += 1;
        state.onFailure();
        return Promise.reject(redisDown());
      };
    },
  });
  return { store, state };
}

function listeningApp(options: { store: StateStore; threadMessages?: EarlierThreadMessage[]; storeWaitMs?: number; now?: () => number }) {
  const submitted: WorkItem[] = [];
  const notices: Array<{ threadTs: string; text: string }> = [];
  const worker = { submit: async (_key: string, item: WorkItem) => void submitted.push(item) } as unknown as ThreadWorker;
  const messenger = {
    postNotice: async ({ threadTs, text }: { threadTs: string; text: string }) => void notices.push({ threadTs, text }),
    readThread: async () => options.threadMessages ?? [],
  } as unknown as ThreadMessenger;
  const receiver: Receiver = { init() {}, start: async () => ({}), stop: async () => {} };
  const silent = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error' as never, setName() {} };
  const app = new App({ token: 'xoxb-x', botId: 'BBOT', botUserId: BOT, receiver, logger: silent as never });
  registerMessageListeners(app, {
    store: options.store,
    worker,
    messenger,
    botUserId: BOT,
    logger: pino({ level: 'silent' }),
    followTtlMs: 7 * 24 * 3600_000,
    ...(options.storeWaitMs === undefined ? {} : { storeWaitMs: options.storeWaitMs }),
  });
  // Slack has its ack whatever the listener does; a listener's error reaches nobody in the thread.
  const deliver = (body: object) => app.processEvent({ body, ack: async () => {} }).catch(() => {});
  return { deliver, submitted, notices };
}

const textsOf = (items: WorkItem[]) => items.map((item) => (item as { text: string }).text);

describe('an app_mention re-sent by Slack because the message was edited', () => {
  it('does not start a second turn from the same message once the delivery dedupe has lapsed', async () => {
    let now = 1_800_000_000_000;
    const { deliver, submitted } = listeningApp({ store: createMemoryStore({ now: () => now }) });

    await deliver(mention({ eventId: 'Ev1', ts: THREAD, text: `<@${BOT}> restart checkout in prod` }));
    expect(textsOf(submitted)).toEqual(['restart checkout in prod']);

    // Two hours later Alice fixes a typo in her old message. Slack sends app_mention again (same ts,
    // a new event id, an `edited` field): it is the same post, not a new request.
    now += 2 * 60 * 60 * 1000;
    await deliver(mention({ eventId: 'Ev2', ts: THREAD, text: `<@${BOT}> restart checkout in prod!`, edited: { user: 'UALICE', ts: '1800007200.000000' } }));
    expect(textsOf(submitted)).toEqual(['restart checkout in prod']);
  });
});

describe('a reply in a followed thread while Redis is unreachable', () => {
  it('is queued once Redis answers within the wait', async () => {
    let redisUp = true;
    const { store, state } = outageStore(createMemoryStore(), () => !redisUp);
    const { deliver, submitted, notices } = listeningApp({ store });
    await deliver(mention({ eventId: 'Ev1', ts: THREAD, text: `<@${BOT}> restart checkout in prod?` }));

    // Alice answers in the followed thread, without a mention, while Redis restarts; it is back
    // as soon as the listener has found it down once.
    redisUp = false;
    state.onFailure = () => {
      redisUp = true;
    };
    await deliver(threadReply({ eventId: 'Ev2', ts: '1800000000.000200', threadTs: THREAD, text: 'yes, go ahead' }));

    expect(state.failures).toBe(1);
    expect(textsOf(submitted)).toEqual(['restart checkout in prod?', 'yes, go ahead']);
    expect(notices).toEqual([]);
  });

  it('tells the thread to send it again when Redis stays down and the bot took part in the thread', async () => {
    let redisUp = true;
    const { store } = outageStore(createMemoryStore(), () => !redisUp);
    const { deliver, submitted, notices } = listeningApp({
      store,
      storeWaitMs: 300,
      threadMessages: [
        { ts: THREAD, userId: 'UALICE', fromBot: false, text: `<@${BOT}> restart checkout in prod?` },
        { ts: '1800000000.000150', userId: BOT, fromBot: true, text: 'Which region?' },
      ],
    });
    await deliver(mention({ eventId: 'Ev1', ts: THREAD, text: `<@${BOT}> restart checkout in prod?` }));

    redisUp = false;
    await deliver(threadReply({ eventId: 'Ev2', ts: '1800000000.000200', threadTs: THREAD, text: 'eu-west' }));

    expect(submitted).toHaveLength(1);
    expect(notices).toEqual([{ threadTs: THREAD, text: expect.stringContaining('please send it again') }]);
    expect(notices[0]?.text).toContain('the state store (Redis) is unreachable');
  });

  it('posts nothing in a thread the bot never joined', async () => {
    const { store } = outageStore(createMemoryStore(), () => true);
    const { deliver, submitted, notices } = listeningApp({
      store,
      storeWaitMs: 300,
      threadMessages: [
        { ts: '1800000000.000900', userId: 'UBOB', fromBot: false, text: 'lunch?' },
        { ts: '1800000000.000950', userId: 'UCAROL', fromBot: false, text: 'sure' },
      ],
    });

    await deliver(threadReply({ eventId: 'Ev3', ts: '1800000000.001000', threadTs: '1800000000.000900', text: 'at noon' }));

    expect({ submitted, notices }).toEqual({ submitted: [], notices: [] });
  });
});
