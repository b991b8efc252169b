import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createManualScheduleClock } from '../../test/helpers/manual-schedule-clock.js';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createScheduledTurns } from './scheduled-turns.js';

/**
 * README: "Cron expressions are read … in the schedule's `timezone` … (daylight-saving changes follow
 * the time zone)". A daily 02:30 Europe/Paris report is a daily report: one firing per local day.
 */
const NIGHTLY: ScheduleConfig = { name: 'nightly', cron: '30 2 * * *', timezone: 'Europe/Paris', channel: 'C0OPS', prompt: 'Report.', autoApprove: [] };

function scheduler(start: number) {
  const clock = createManualScheduleClock(start);
  const posts: number[] = [];
  const turns = createScheduledTurns({
    schedules: [NIGHTLY],
    store: createMemoryStore(),
    poster: {
      async postChannelMessage() {
        posts.push(clock.now());
        return `1800000000.00000${posts.length}`;
      },
    },
    notices: { postNotice: async () => {} },
    followTtlMs: 60_000,
    worker: { submit: async () => {} },
    teamId: async () => 'T0TEAM',
    clock,
    logger: pino({ level: 'silent' }),
  });
  return { clock, posts, turns };
}

/** Advances minute by minute, so every timer (and every re-armed one) runs when due. */
async function walk(clock: ReturnType<typeof createManualScheduleClock>, from: number, to: number) {
  for (let t = from; t <= to; t += 60_000) await clock.advanceTo(t);
}

describe('a daily schedule across daylight-saving changes', () => {
  it('fires once on the night the clocks go back (02:30 happens twice in Paris)', async () => {
    // 2026-10-25: 03:00 CEST becomes 02:00 CET; local 02:30 is 00:30Z and again 01:30Z.
    const start = Date.parse('2026-10-24T20:00:00Z');
    const { clock, posts, turns } = scheduler(start);
    turns.start();
    await walk(clock, start, Date.parse('2026-10-25T12:00:00Z'));
    await turns.stop();
    expect(posts.map((t) => new Date(t).toISOString())).toHaveLength(1);
  });

  it('fires on the night the clocks go forward (local 02:30 does not exist in Paris)', async () => {
    // 2026-03-29: 02:00 CET becomes 03:00 CEST. A daily job must not silently skip the day.
    const start = Date.parse('2026-03-28T20:00:00Z');
    const { clock, posts, turns } = scheduler(start);
    turns.start();
    await walk(clock, start, Date.parse('2026-03-29T20:00:00Z'));
    await turns.stop();
    expect(posts.map((t) => new Date(t).toISOString())).toHaveLength(1);
  });
});
