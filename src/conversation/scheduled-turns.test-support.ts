import { pino } from 'pino';
import type { ManualScheduleClock } from '../../test/helpers/manual-schedule-clock.js';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';
import type { StateStore } from '../store/state-store.js';
import { createScheduledTurns } from './scheduled-turns.js';

/**
 * Scheduled turns for `schedules` over `store`, timed by `clock`, whose channel posts all succeed and
 * whose turns go nowhere. `posted` is told of each post and answers how many there have been so far
 * (the post's ts is made of that count).
 */
export function postingScheduledTurns(options: { schedules: ScheduleConfig[]; store: StateStore; clock: ManualScheduleClock; posted: () => number }) {
  const { schedules, store, clock, posted } = options;
  return createScheduledTurns({
    schedules,
    store,
    poster: {
      async postChannelMessage() {
        return `1800000000.00000${posted()}`;
      },
    },
    notices: { postNotice: async () => {} },
    followTtlMs: 60_000,
    worker: { submit: async () => {} },
    teamId: async () => 'T0TEAM',
    clock,
    logger: pino({ level: 'silent' }),
  });
}
