import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SlackCallError } from '../errors/countersign-error.js';
import { createRedisStore } from '../store/redis-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createCardRefreshes } from './card-refreshes.js';
import type { PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';

/**
 * Review S. `retryDueKept` claims a due refresh with postponeCardRefresh(refresh, now() + pause): a
 * ZADD XX CH that answers 1 whenever the score CHANGES. Two replicas' sweeps that both read the due
 * refresh compute different `until`s (their clocks differ by a millisecond or more), so both "claims"
 * move the score and both succeed: both sweeps try the same card, and with Slack refusing the old card
 * for good both post it again (the loser's card is then taken back; with a lost reply, review S's other
 * test, the winner's). The claim is only a claim for two sweeps at the very same millisecond.
 * Take-backs (postponeTakeBack) share the same claim.
 */

const refused = () => new SlackCallError({ method: 'chat.update', cause: new Error('An API error occurred: cant_update_message'), tryLater: false });

function barrier() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const stores: StateStore[] = [];
afterAll(async () => {
  for (const store of stores) await store.close?.();
});

describe('two replicas sweeping the same kept card refresh (review S)', () => {
  it('only one sweep claims it', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    stores.push(store);
    const step = makeStep(['apv-1']);
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await store.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);
    await store.setStepCard(step.stepId, 'card-1');
    const t0 = Date.now();
    await store.scheduleCardRefresh({ stepId: step.stepId, since: t0 - 20_000 }, t0 - 5_000);

    // Both sweeps read the due refresh before either claims it.
    let reads = 0;
    const bothRead = barrier();
    const sharedStore = (): StateStore =>
      new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'dueCardRefreshes') {
            return async (options: { now: number; limit: number }) => {
              const due = await target.dueCardRefreshes(options);
              reads += 1;
              if (reads === 2) bothRead.open();
              await bothRead.opened;
              return due;
            };
          }
          return Reflect.get(target, property, receiver) as unknown;
        },
      });
    const updates: string[] = [];
    const posts: string[] = [];
    const messengerFor = (who: string) => ({
      async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
        updates.push(who);
        if (drawn.cardTs === 'card-1') throw refused();
      },
      async updateStepCopy() {},
      async postStepCard() {
        posts.push(who);
        return `card-${who}`;
      },
      async findPostedCard() {
        return undefined;
      },
      async permalinkOf() {
        return undefined;
      },
      async postNotice() {},
    });
    const takeBacks = { takeBack: async () => {} };
    const logger = pino({ level: 'silent' });
    // Replica B's clock is 1 ms ahead of A's.
    const a = createCardRefreshes({ store: sharedStore(), messenger: messengerFor('A'), takeBacks, logger, now: () => t0 });
    const b = createCardRefreshes({ store: sharedStore(), messenger: messengerFor('B'), takeBacks, logger, now: () => t0 + 1 });
    await Promise.all([a.retryDue(), b.retryDue()]);

    expect({ sweepsThatTriedTheCard: new Set(updates).size, cardsPostedAgain: posts.length }).toEqual({ sweepsThatTriedTheCard: 1, cardsPostedAgain: 1 });
  });
});
