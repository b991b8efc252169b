import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { createManualScheduleClock } from '../helpers/manual-schedule-clock.js';
import { CHANNEL, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const START = Date.UTC(2026, 10, 25, 12, 7);
const FIRST_FIRING = Date.UTC(2026, 10, 25, 12, 15);
const SCHEDULE = `
schedules:
  - name: heartbeat
    cron: '*/15 * * * *'
    channel: ${CHANNEL}
    prompt: Check the pods.
`;
const scheduledPosts = (h: Harness) => h.slack.messages(CHANNEL).filter((message) => message.thread_ts === undefined || message.thread_ts === message.ts).filter((message) => message.text.includes('Scheduled: *heartbeat*'));
const isScheduledItem = (item: string) => item.includes('schedule:heartbeat');

describe('a scheduled firing whose turn could not be queued', () => {
  it('says so in the thread it posted, as a person’s message that could not be taken is told', async () => {
    const clock = createManualScheduleClock(START);
    let failed = false;
    const h = await harness({
      extraYaml: SCHEDULE,
      scheduleClock: clock,
      // Redis refuses the queue write once, right after the firing's post (a failover, a restart).
      wrapStore: (store) => ({
        ...store,
        enqueueWork: (threadKey, item, lockTtlMs) => {
          if (!failed && isScheduledItem(item)) {
            failed = true;
            return Promise.reject(Object.assign(new Error('Connection is closed.'), { name: 'Error' }));
          }
          return store.enqueueWork(threadKey, item, lockTtlMs);
        },
      }),
    });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    await h.settled();
    expect(failed).toBe(true);
    // Without the notice the thread held only ":alarm_clock: Scheduled: heartbeat", forever; only a log line said why.
    await waitFor(() => threadReplies(h, post!.ts).some((message) => message.text.includes('could not')), { message: 'a notice in the scheduled thread', timeoutMs: 3_000 });
  });
});

describe('a reply in a scheduled thread before its turn is taken up', () => {
  it('is kept for the thread, as a reply in a mentioned thread is', async () => {
    const clock = createManualScheduleClock(START);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let queued!: () => void;
    const reachedQueue = new Promise<void>((resolve) => (queued = resolve));
    const h = await harness({
      extraYaml: SCHEDULE,
      scheduleClock: clock,
      // The scheduled item waits before it is taken (as behind a full load gate), after the post.
      wrapStore: (store) => ({
        ...store,
        enqueueWork: async (threadKey, item, lockTtlMs) => {
          if (isScheduledItem(item)) {
            queued();
            await held;
          }
          return store.enqueueWork(threadKey, item, lockTtlMs);
        },
      }),
    });
    h.openai.enqueue({ text: 'Pods are fine.' }, { text: 'OK, skipping the restarts today.' });
    const firing = clock.advanceTo(FIRST_FIRING);
    await reachedQueue;
    const [post] = scheduledPosts(h);
    // Carol sees the post and answers in its thread before the turn has started.
    await h.threadMessage({ user: 'UCAROL', text: 'skip restarts today, we are mid-deploy', threadTs: post!.ts, ts: nextTs() });
    // Her message handled; the scheduled submit is held on purpose, so drains are not waited for.
    await h.settled({ drains: false });
    release();
    await firing;
    await waitFor(() => threadReplies(h, post!.ts).some((message) => message.text === 'Pods are fine.'), { message: 'the scheduled answer' });
    await h.settled();
    const everythingAsked = h.openai.requests.flatMap((request) => conversationOf(request).map((message) => message.text)).join('\n');
    // With the thread unfollowed until its turn, Carol's reply was dropped as chatter; the model never saw it.
    expect(everythingAsked).toContain('skip restarts today');
  });
});
