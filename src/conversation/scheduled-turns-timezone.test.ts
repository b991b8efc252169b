import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createManualScheduleClock } from '../../test/helpers/manual-schedule-clock.js';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';
import { createRedisStore } from '../store/redis-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { postingScheduledTurns } from './scheduled-turns.test-support.js';

/** README: "timezone: … IANA zone the cron is read in (default UTC)"; the schema's doc says the same. */
const DAILY: ScheduleConfig = { name: 'daily-report', cron: '0 9 * * *', channel: 'C0OPS', prompt: 'Report.', autoApprove: [] };
const START = Date.parse('2026-11-25T08:00:00.000Z');
const NINE_UTC = Date.parse('2026-11-25T09:00:00.000Z');
const NINE_NEW_YORK = Date.parse('2026-11-25T14:00:00.000Z');

const originalTz = process.env.TZ;
afterEach(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

function replica(store: StateStore, clock: ReturnType<typeof createManualScheduleClock>, posts: string[], label: string) {
  return postingScheduledTurns({ schedules: [DAILY], store, clock, posted: () => posts.push(label) });
}

describe('a schedule without `timezone`', () => {
  it('fires at 09:00 UTC, as the README promises, on a host whose TZ is not UTC', async () => {
    process.env.TZ = 'America/New_York';
    const clock = createManualScheduleClock(START);
    const posts: string[] = [];
    const turns = replica(createMemoryStore(), clock, posts, 'a');
    turns.start();
    await clock.advanceTo(NINE_UTC);
    await turns.stop();
    // Read in the process's local zone, nothing was posted at 09:00 UTC (it fired at 14:00 UTC here).
    expect(posts).toEqual(['a']);
  });

  it('fires once a day across two replicas whose hosts have different TZ settings (real Redis claims)', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const storeA = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    const storeB = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    const clock = createManualScheduleClock(START);
    const posts: string[] = [];
    try {
      process.env.TZ = 'UTC';
      const a = replica(storeA, clock, posts, 'replica in UTC');
      a.start();
      process.env.TZ = 'America/New_York';
      const b = replica(storeB, clock, posts, 'replica in New York');
      b.start();
      // Back to replica A's zone for its re-arm after 09:00 (B's next firing is already armed).
      process.env.TZ = 'UTC';
      await clock.advanceTo(NINE_UTC);
      await clock.advanceTo(NINE_NEW_YORK);
      await a.stop();
      await b.stop();
      // Read in each host's zone, both posted, each claiming its own "minute" (09:00Z and 14:00Z): the report ran twice.
      // Read in UTC, both fire at 09:00Z and claim the same minute: whichever claims first posts, once.
      expect(posts).toHaveLength(1);
    } finally {
      await storeA.close();
      await storeB.close();
    }
  });
});
