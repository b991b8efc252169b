import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createManualScheduleClock } from '../../test/helpers/manual-schedule-clock.js';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';
import { createMemoryStore } from '../store/memory-store.js';
import { threadKeyOf } from '../store/thread-state.js';
import { createScheduledTurns } from './scheduled-turns.js';
import type { WorkItem } from './work-item.js';

const HEARTBEAT: ScheduleConfig = { name: 'heartbeat', cron: '*/15 * * * *', channel: 'C0OPS', prompt: 'Check the pods.', autoApprove: [] };
const at = (time: string) => Date.parse(`2026-11-25T${time}:00.000Z`);

function scheduler(options: { start: number; schedules?: ScheduleConfig[]; failPost?: boolean; submit?: (item: WorkItem) => Promise<void> }) {
  const clock = createManualScheduleClock(options.start);
  const store = createMemoryStore();
  const posts: Array<{ channel: string; text: string }> = [];
  const notices: Array<{ channel: string; threadTs: string; text: string }> = [];
  const submitted: WorkItem[] = [];
  const turns = createScheduledTurns({
    schedules: options.schedules ?? [HEARTBEAT],
    store,
    poster: {
      async postChannelMessage(post) {
        if (options.failPost) throw new Error('slack is down');
        posts.push(post);
        return `1800000000.00000${posts.length}`;
      },
    },
    notices: { postNotice: async (notice) => void notices.push(notice) },
    followTtlMs: 60_000,
    worker: {
      submit: async (_threadKey, item) => {
        submitted.push(item);
        await options.submit?.(item);
      },
    },
    teamId: async () => 'T0TEAM',
    clock,
    logger: pino({ level: 'silent' }),
  });
  return { clock, store, posts, notices, submitted, turns };
}

describe('createScheduledTurns', () => {
  it('queues the prompt in the thread of its post, as the schedule', async () => {
    const { clock, posts, submitted, turns } = scheduler({ start: at('12:07') });
    turns.start();
    await clock.advanceTo(at('12:14'));
    expect(posts).toEqual([]);
    await clock.advanceTo(at('12:15'));
    expect(posts).toEqual([{ channel: 'C0OPS', text: ':alarm_clock: Scheduled: *heartbeat*' }]);
    expect(submitted).toEqual([
      { kind: 'message', userId: 'schedule:heartbeat', text: 'Check the pods.', ts: '1800000000.000001', teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1800000000.000001', readEarlierMessages: false },
    ]);
    await turns.stop();
  });

  it('runs a firing its timer woke late for once, then continues from the present without catching up', async () => {
    const { clock, posts, turns } = scheduler({ start: at('12:07') });
    turns.start();
    // The loop stalled for an hour: the 12:15 firing runs once, the ones in between are skipped.
    await clock.advanceTo(at('13:10'));
    expect(posts).toHaveLength(1);
    await clock.advanceTo(at('13:14'));
    expect(posts).toHaveLength(1);
    await clock.advanceTo(at('13:15'));
    expect(posts).toHaveLength(2);
    await turns.stop();
  });

  it('keeps its timers going after a firing that could not post, and stops them on stop', async () => {
    const { clock, turns } = scheduler({ start: at('12:07'), failPost: true });
    turns.start();
    await clock.advanceTo(at('12:15'));
    expect(clock.pending()).toBe(1);
    await turns.stop();
    expect(clock.pending()).toBe(0);
  });

  it('follows the new thread before queuing its turn, so a reply sent meanwhile is kept for it', async () => {
    let followedWhenQueued: boolean | undefined;
    const { clock, store, turns } = scheduler({
      start: at('12:07'),
      submit: async (item) => {
        if (item.kind === 'message') followedWhenQueued = (await store.getThread(threadKeyOf(item))) !== undefined;
      },
    });
    turns.start();
    await clock.advanceTo(at('12:15'));
    await turns.stop();
    expect(followedWhenQueued).toBe(true);
  });

  it('says in the thread that its turn could not be queued, and fires again at the next time', async () => {
    let failures = 1;
    const { clock, notices, posts, turns } = scheduler({
      start: at('12:07'),
      submit: async () => {
        if (failures-- > 0) throw new Error('Connection is closed.');
      },
    });
    turns.start();
    await clock.advanceTo(at('12:15'));
    await vi.waitFor(() => expect(notices).toHaveLength(1));
    expect(notices[0]).toMatchObject({ channel: 'C0OPS', threadTs: '1800000000.000001', text: expect.stringContaining('could not queue this scheduled turn (the state store (Redis) is unreachable)') });
    await clock.advanceTo(at('12:30'));
    expect(posts).toHaveLength(2);
    await turns.stop();
    expect(notices).toHaveLength(1);
  });
});
