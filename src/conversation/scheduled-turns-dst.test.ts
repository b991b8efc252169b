import { describe, expect, it } from 'vitest';
import { createManualScheduleClock } from '../../test/helpers/manual-schedule-clock.js';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';
import { createMemoryStore } from '../store/memory-store.js';
import { postingScheduledTurns } from './scheduled-turns.test-support.js';

/**
 * README: "Cron expressions are read … in the schedule's `timezone` … (daylight-saving changes follow
 * the time zone)". A daily 02:30 Europe/Paris report is a daily report: one firing per local day.
 */
const NIGHTLY: ScheduleConfig = { name: 'nightly', cron: '30 2 * * *', timezone: 'Europe/Paris', channel: 'C0OPS', prompt: 'Report.', autoApprove: [] };

/**
 * When NIGHTLY's turns posted, from `start` to `end`: the clock advances minute by minute, so every
 * timer (and every re-armed one) runs when due.
 */
async function postsBetween(start: number, end: number): Promise<number[]> {
  const clock = createManualScheduleClock(start);
  const posts: number[] = [];
  const turns = postingScheduledTurns({ schedules: [NIGHTLY], store: createMemoryStore(), clock, posted: () => posts.push(clock.now()) });
  turns.start();
  for (let t = start; t <= end; t += 60_000) await clock.advanceTo(t);
  await turns.stop();
  return posts;
}

describe('a daily schedule across daylight-saving changes', () => {
  it('fires once on the night the clocks go back (02:30 happens twice in Paris)', async () => {
    // 2026-10-25: 03:00 CEST becomes 02:00 CET; local 02:30 is 00:30Z and again 01:30Z.
    const posts = await postsBetween(Date.parse('2026-10-24T20:00:00Z'), Date.parse('2026-10-25T12:00:00Z'));
    expect(posts.map((t) => new Date(t).toISOString())).toHaveLength(1);
  });

  it('fires on the night the clocks go forward (local 02:30 does not exist in Paris)', async () => {
    // 2026-03-29: 02:00 CET becomes 03:00 CEST. A daily job must not silently skip the day.
    const posts = await postsBetween(Date.parse('2026-03-28T20:00:00Z'), Date.parse('2026-03-29T20:00:00Z'));
    expect(posts.map((t) => new Date(t).toISOString())).toHaveLength(1);
  });
});
